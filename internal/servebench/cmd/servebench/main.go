// Command servebench measures `opm serve` on one catalog: start-up time,
// CPU and peak memory, a full ListBundles, and optionally the OLM
// resolver's call mix from concurrent clients. hack/bench-serve.sh runs it.
//
//	servebench -opm bin/opm -catalog DIR [-label NAME] [-runs N]
//	           [-cache-dir DIR] [-load -clients 50 -calls 40]
//	servebench -addr HOST:PORT [-clients 50 -calls 40]
//	servebench -addr HOST:PORT -olm
//
// With -cache-dir, a first unmeasured run builds the cache and the measured
// runs start from it. It prints one tab-separated line per catalog (the
// median run): label, healthy after (s), CPU to healthy (s), VmHWM when
// healthy (MiB), ListBundles (s), VmHWM after ListBundles (MiB), records.
// Servers listen on 127.0.0.1 only.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/opmkit/opm/internal/servebench"
)

func main() {
	var (
		bin      = flag.String("opm", "bin/opm", "the opm binary")
		catalog  = flag.String("catalog", "", "the catalog directory")
		label    = flag.String("label", "", "the name printed for the catalog (default: the directory)")
		runs     = flag.Int("runs", 3, "measured starts; the median is printed")
		cacheDir = flag.String("cache-dir", "", "serve with this --cache-dir (built by a first, unmeasured start)")
		load     = flag.Bool("load", false, "also run the call mix (once, on the last start)")
		olm      = flag.Bool("olm", false, "also run OLM's call pattern after ListBundles, and print the peak RSS after it")
		clients  = flag.Int("clients", 50, "concurrent clients of the call mix")
		calls    = flag.Int("calls", 40, "calls per client")
		header   = flag.Bool("header", false, "print the column names first")
		addr     = flag.String("addr", "", "run only the call mix, against the server at this address")
	)
	flag.Parse()
	if *addr != "" && *olm {
		conn, err := grpc.NewClient(*addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			fail(err)
		}
		defer conn.Close()
		t0 := time.Now()
		n, err := servebench.OLMPattern(context.Background(), conn)
		if err != nil {
			fail(err)
		}
		fmt.Printf("OLM's call pattern: %d calls (%d packages, %d channels, %d APIs, %d bundles) in %v\n", n.Calls, n.Packages, n.Channels, n.APIs, n.Bundles, time.Since(t0).Round(time.Millisecond))
		return
	}
	if *addr != "" {
		rep, err := servebench.LoadAddr(context.Background(), *addr, servebench.LoadOptions{Clients: *clients, CallsPerClient: *calls, Seed: 1})
		if err != nil {
			fail(err)
		}
		fmt.Print(rep)
		if rep.Errors > 0 || rep.Err != nil {
			fail(fmt.Errorf("the call mix failed: %v", rep.Err))
		}
		return
	}
	if *header {
		cols := "catalog\thealthy s\tCPU s\tRSS healthy MiB\tListBundles s\tRSS after ListBundles MiB\trecords"
		if *olm {
			cols += "\tOLM pattern s\tpeak RSS after OLM pattern MiB\tOLM calls"
		}
		fmt.Println(cols)
	}
	if *catalog == "" {
		if *header {
			return
		}
		fmt.Fprintln(os.Stderr, "servebench: -catalog is required")
		os.Exit(2)
	}
	if *label == "" {
		*label = *catalog
	}
	ctx := context.Background()
	var args []string
	if *cacheDir != "" {
		args = []string{"--cache-dir", *cacheDir}
		if _, err := servebench.Measure(ctx, servebench.MeasureOptions{Bin: *bin, Catalog: *catalog, Args: args}); err != nil {
			fail(err)
		}
	}
	var ms []*servebench.Measurement
	for i := range *runs {
		o := servebench.MeasureOptions{Bin: *bin, Catalog: *catalog, Args: args, OLM: *olm}
		if *load && i == *runs-1 {
			o.Load = &servebench.LoadOptions{Clients: *clients, CallsPerClient: *calls, Seed: 1}
		}
		m, err := servebench.Measure(ctx, o)
		if err != nil {
			fail(err)
		}
		if m.ExitCode != 0 {
			fail(fmt.Errorf("the server exited %d after SIGTERM, want 0", m.ExitCode))
		}
		ms = append(ms, m)
	}
	last := ms[len(ms)-1]
	sort.Slice(ms, func(i, j int) bool { return ms[i].Healthy < ms[j].Healthy })
	med := ms[len(ms)/2]
	sec := func(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }
	mib := func(kib int64) string { return fmt.Sprintf("%.1f", float64(kib)/1024) }
	if *olm {
		// The peak after OLM's pattern is a maximum over the starts: the
		// figure to hold against a pod's memory.
		worst := ms[0]
		for _, m := range ms {
			if m.HWMOLM > worst.HWMOLM {
				worst = m
			}
		}
		fmt.Printf("%s\t%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%d\n", *label, sec(med.Healthy), sec(med.CPU), mib(med.HWMHealthy), sec(med.ListBundles), mib(med.HWMListed), med.Records,
			sec(med.OLMTime), mib(worst.HWMOLM), med.OLM.Calls)
	} else {
		fmt.Printf("%s\t%s\t%s\t%s\t%s\t%s\t%d\n", *label, sec(med.Healthy), sec(med.CPU), mib(med.HWMHealthy), sec(med.ListBundles), mib(med.HWMListed), med.Records)
	}
	if last.Load != nil {
		fmt.Printf("\ncall mix on %s: %s", *label, last.Load)
		fmt.Printf("peak RSS after the call mix: %s MiB\n", mib(last.HWMLoaded))
		if last.Load.Errors > 0 || last.Load.Err != nil {
			fail(fmt.Errorf("the call mix failed: %v", last.Load.Err))
		}
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "servebench:", err)
	os.Exit(1)
}
