// Package servebench measures `opm serve`: the time from process start to
// the first SERVING health answer, peak memory (VmHWM) after start-up and
// after a full ListBundles, and the latency of the OLM resolver's call mix
// from many concurrent clients. hack/bench-serve.sh drives it through
// cmd/servebench; pkg/serve's benchmarks use the call mix in-process.
// Servers it starts listen on 127.0.0.1 only, and every run is bounded in
// calls and time.
package servebench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/opmkit/opm/pkg/api"
)

// Plan holds valid requests drawn from a served catalog.
type Plan struct {
	packages []string
	channels []*api.GetBundleInChannelRequest
	bundles  []*api.GetBundleRequest
	replaces []*api.GetReplacementRequest
	csvNames []string
	gvks     []*api.GroupVersionKind
	// Records is the number of bundles ListBundles streamed.
	Records int
}

// NewPlan lists the catalog (ListPackages, GetPackage, ListBundles) and
// prepares requests that must succeed.
func NewPlan(ctx context.Context, conn grpc.ClientConnInterface) (*Plan, error) {
	c := api.NewRegistryClient(conn)
	p := &Plan{}
	ls, err := c.ListPackages(ctx, &api.ListPackageRequest{})
	if err != nil {
		return nil, err
	}
	for {
		m, err := ls.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		p.packages = append(p.packages, m.Name)
	}
	slices.Sort(p.packages)
	for _, name := range p.packages {
		pkg, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: name})
		if err != nil {
			return nil, err
		}
		for _, ch := range pkg.Channels {
			p.channels = append(p.channels, &api.GetBundleInChannelRequest{PkgName: name, ChannelName: ch.Name})
		}
	}
	n, err := ListBundles(ctx, conn, func(b *api.Bundle) {
		p.bundles = append(p.bundles, &api.GetBundleRequest{PkgName: b.PackageName, ChannelName: b.ChannelName, CsvName: b.CsvName})
		if b.Replaces != "" {
			p.replaces = append(p.replaces, &api.GetReplacementRequest{CsvName: b.Replaces, PkgName: b.PackageName, ChannelName: b.ChannelName})
			p.csvNames = append(p.csvNames, b.Replaces)
		}
		p.gvks = append(p.gvks, b.ProvidedApis...)
	})
	if err != nil {
		return nil, err
	}
	p.Records = n
	if len(p.bundles) == 0 {
		return nil, errors.New("the catalog has no bundles")
	}
	return p, nil
}

// ListBundles streams every bundle to fn (nil: discard) and returns the
// count.
func ListBundles(ctx context.Context, conn grpc.ClientConnInterface, fn func(*api.Bundle)) (int, error) {
	s, err := api.NewRegistryClient(conn).ListBundles(ctx, &api.ListBundlesRequest{}, grpc.MaxCallRecvMsgSize(1<<30))
	if err != nil {
		return 0, err
	}
	n := 0
	for {
		b, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
		if fn != nil {
			fn(b)
		}
	}
}

// call is one kind of call of the mix.
type call struct {
	name   string
	weight int
	do     func(ctx context.Context, c api.RegistryClient, h grpc_health_v1.HealthClient, r *rand.Rand, p *Plan) error
}

func pick[T any](r *rand.Rand, s []T) T { return s[r.IntN(len(s))] }

func drain[T any](s interface{ Recv() (*T, error) }, err error) error {
	if err != nil {
		return err
	}
	for {
		if _, err := s.Recv(); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

// mix is the OLM resolver's call mix, in weights per 100 calls: the
// resolver snapshots catalogs with ListBundles, the package server lists
// packages and their channel heads, installs and upgrades fetch bundles and
// their replacements and providers, and kubelet probes health.
var mix = []call{
	{"ListBundles", 2, func(ctx context.Context, c api.RegistryClient, _ grpc_health_v1.HealthClient, _ *rand.Rand, _ *Plan) error {
		s, err := c.ListBundles(ctx, &api.ListBundlesRequest{}, grpc.MaxCallRecvMsgSize(1<<30))
		return drain[api.Bundle](s, err)
	}},
	{"ListPackages", 4, func(ctx context.Context, c api.RegistryClient, _ grpc_health_v1.HealthClient, _ *rand.Rand, _ *Plan) error {
		s, err := c.ListPackages(ctx, &api.ListPackageRequest{})
		return drain[api.PackageName](s, err)
	}},
	{"GetPackage", 20, func(ctx context.Context, c api.RegistryClient, _ grpc_health_v1.HealthClient, r *rand.Rand, p *Plan) error {
		_, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: pick(r, p.packages)})
		return err
	}},
	{"GetBundleForChannel", 15, func(ctx context.Context, c api.RegistryClient, _ grpc_health_v1.HealthClient, r *rand.Rand, p *Plan) error {
		//lint:ignore SA1019 the server implements the deprecated RPC, and OLM's resolver still calls it
		_, err := c.GetBundleForChannel(ctx, pick(r, p.channels))
		return err
	}},
	{"GetBundle", 20, func(ctx context.Context, c api.RegistryClient, _ grpc_health_v1.HealthClient, r *rand.Rand, p *Plan) error {
		_, err := c.GetBundle(ctx, pick(r, p.bundles))
		return err
	}},
	{"GetBundleThatReplaces", 10, func(ctx context.Context, c api.RegistryClient, _ grpc_health_v1.HealthClient, r *rand.Rand, p *Plan) error {
		if len(p.replaces) == 0 {
			return nil
		}
		_, err := c.GetBundleThatReplaces(ctx, pick(r, p.replaces))
		return err
	}},
	{"GetChannelEntriesThatReplace", 5, func(ctx context.Context, c api.RegistryClient, _ grpc_health_v1.HealthClient, r *rand.Rand, p *Plan) error {
		if len(p.csvNames) == 0 {
			return nil
		}
		s, err := c.GetChannelEntriesThatReplace(ctx, &api.GetAllReplacementsRequest{CsvName: pick(r, p.csvNames)})
		return drain[api.ChannelEntry](s, err)
	}},
	{"GetChannelEntriesThatProvide", 5, func(ctx context.Context, c api.RegistryClient, _ grpc_health_v1.HealthClient, r *rand.Rand, p *Plan) error {
		if len(p.gvks) == 0 {
			return nil
		}
		g := pick(r, p.gvks)
		s, err := c.GetChannelEntriesThatProvide(ctx, &api.GetAllProvidersRequest{Group: g.Group, Version: g.Version, Kind: g.Kind})
		return drain[api.ChannelEntry](s, err)
	}},
	{"GetDefaultBundleThatProvides", 10, func(ctx context.Context, c api.RegistryClient, _ grpc_health_v1.HealthClient, r *rand.Rand, p *Plan) error {
		if len(p.gvks) == 0 {
			return nil
		}
		g := pick(r, p.gvks)
		_, err := c.GetDefaultBundleThatProvides(ctx, &api.GetDefaultProviderRequest{Group: g.Group, Version: g.Version, Kind: g.Kind})
		// A GVK provided only outside default channels is a valid
		// "not found": what matters here is that the server answers.
		if err != nil && strings.Contains(err.Error(), "found") {
			return nil
		}
		return err
	}},
	{"Health/Check", 9, func(ctx context.Context, _ api.RegistryClient, h grpc_health_v1.HealthClient, _ *rand.Rand, _ *Plan) error {
		resp, err := h.Check(ctx, &grpc_health_v1.HealthCheckRequest{})
		if err == nil && resp.Status != grpc_health_v1.HealthCheckResponse_SERVING {
			err = fmt.Errorf("health %v", resp.Status)
		}
		return err
	}},
}

// LoadOptions bound a load run.
type LoadOptions struct {
	Clients        int           // concurrent clients (default 50)
	CallsPerClient int           // calls each client makes (default 40)
	Timeout        time.Duration // the whole run's limit (default 2 minutes)
	Seed           uint64
}

// Latencies summarises call durations.
type Latencies struct {
	N                  int
	P50, P90, P99, Max time.Duration
}

func summarise(ds []time.Duration) Latencies {
	if len(ds) == 0 {
		return Latencies{}
	}
	slices.Sort(ds)
	q := func(f float64) time.Duration { return ds[min(len(ds)-1, int(f*float64(len(ds))))] }
	return Latencies{N: len(ds), P50: q(0.50), P90: q(0.90), P99: q(0.99), Max: ds[len(ds)-1]}
}

// Report is the outcome of a load run.
type Report struct {
	Clients  int
	Calls    int
	Errors   int
	Err      error // the first error
	Duration time.Duration
	All      Latencies
	Methods  map[string]Latencies
}

func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d clients, %d calls in %v (%.0f calls/s), %d errors\n", r.Clients, r.Calls, r.Duration.Round(time.Millisecond),
		float64(r.Calls)/r.Duration.Seconds(), r.Errors)
	if r.Err != nil {
		fmt.Fprintf(&b, "first error: %v\n", r.Err)
	}
	fmt.Fprintf(&b, "%-30s %6s %9s %9s %9s %9s\n", "call", "n", "p50", "p90", "p99", "max")
	names := make([]string, 0, len(r.Methods))
	for n := range r.Methods {
		names = append(names, n)
	}
	sort.Strings(names)
	row := func(name string, l Latencies) {
		fmt.Fprintf(&b, "%-30s %6d %9s %9s %9s %9s\n", name, l.N, ms(l.P50), ms(l.P90), ms(l.P99), ms(l.Max))
	}
	for _, n := range names {
		row(n, r.Methods[n])
	}
	row("all", r.All)
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.2fms", float64(d.Microseconds())/1000) }

// Load runs the call mix from opts.Clients concurrent clients sharing conn
// (as OLM's components share their connection to a catalog pod).
func Load(ctx context.Context, conn grpc.ClientConnInterface, p *Plan, opts LoadOptions) *Report {
	if opts.Clients <= 0 {
		opts.Clients = 50
	}
	if opts.CallsPerClient <= 0 {
		opts.CallsPerClient = 40
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	total := 0
	for _, c := range mix {
		total += c.weight
	}
	rc := api.NewRegistryClient(conn)
	hc := grpc_health_v1.NewHealthClient(conn)
	rep := &Report{Clients: opts.Clients, Methods: map[string]Latencies{}}
	var mu sync.Mutex
	durs := map[string][]time.Duration{}
	var all []time.Duration
	var wg sync.WaitGroup
	start := time.Now()
	for i := range opts.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(opts.Seed, uint64(i)))
			for range opts.CallsPerClient {
				if ctx.Err() != nil {
					return
				}
				w := r.IntN(total)
				c := mix[0]
				for _, m := range mix {
					if w < m.weight {
						c = m
						break
					}
					w -= m.weight
				}
				t0 := time.Now()
				err := c.do(ctx, rc, hc, r, p)
				d := time.Since(t0)
				mu.Lock()
				rep.Calls++
				if err != nil {
					rep.Errors++
					if rep.Err == nil {
						rep.Err = fmt.Errorf("%s: %w", c.name, err)
					}
				}
				durs[c.name] = append(durs[c.name], d)
				all = append(all, d)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	rep.Duration = time.Since(start)
	if rep.Calls < opts.Clients*opts.CallsPerClient && rep.Err == nil {
		rep.Err = fmt.Errorf("only %d of %d calls made within %v", rep.Calls, opts.Clients*opts.CallsPerClient, opts.Timeout)
	}
	for n, ds := range durs {
		rep.Methods[n] = summarise(ds)
	}
	rep.All = summarise(all)
	return rep
}

// OLMCalls counts the calls of one run of [OLMPattern].
type OLMCalls struct {
	Packages, Channels, APIs, Bundles int
	Calls                             int
}

// OLMPattern makes the calls OLM's components make against a catalog pod,
// in their order, over conn: the catalog operator's sync (ListBundles, then
// GetPackage for every package, one at a time), the package server's
// refresh (ListBundles, ListPackages, then, concurrently for every package
// as its provider does, GetPackage and GetBundleForChannel for every
// channel),
// the resolver's provider look-ups (GetDefaultBundleThatProvides,
// GetLatestChannelEntriesThatProvide and GetChannelEntriesThatProvide for
// every provided API) and, last, GetBundle for every bundle of every
// channel. Lookups that upstream answers with "not found" (an API provided
// only outside default channels or by no channel head) count as answered.
func OLMPattern(ctx context.Context, conn grpc.ClientConnInterface) (OLMCalls, error) {
	var n OLMCalls
	c := api.NewRegistryClient(conn)
	var bundles []*api.GetBundleRequest
	type gvk struct{ group, version, kind string }
	apis := map[gvk]bool{}
	var gvks []*api.GroupVersionKind
	count, err := ListBundles(ctx, conn, func(b *api.Bundle) {
		bundles = append(bundles, &api.GetBundleRequest{PkgName: b.PackageName, ChannelName: b.ChannelName, CsvName: b.CsvName})
		for _, g := range b.ProvidedApis {
			k := gvk{g.Group, g.Version, g.Kind}
			if !apis[k] {
				apis[k] = true
				gvks = append(gvks, &api.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind})
			}
		}
	})
	n.Calls++
	if err != nil {
		return n, fmt.Errorf("ListBundles: %w", err)
	}
	n.Bundles = count
	n.APIs = len(gvks)
	// The catalog operator's sync: GetPackage for every package ListBundles
	// named.
	seen := map[string]bool{}
	for _, b := range bundles {
		if seen[b.PkgName] {
			continue
		}
		seen[b.PkgName] = true
		n.Calls++
		if _, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: b.PkgName}); err != nil {
			return n, fmt.Errorf("GetPackage %s: %w", b.PkgName, err)
		}
	}
	var names []string
	ls, err := c.ListPackages(ctx, &api.ListPackageRequest{})
	if err == nil {
		for {
			m, rerr := ls.Recv()
			if errors.Is(rerr, io.EOF) {
				break
			}
			if rerr != nil {
				err = rerr
				break
			}
			names = append(names, m.Name)
		}
	}
	n.Calls++
	if err != nil {
		return n, fmt.Errorf("ListPackages: %w", err)
	}
	n.Packages = len(names)
	// The package server's refresh (its own ListBundles, then
	// ListPackages), with OLM's concurrency: one goroutine per package,
	// each asking GetPackage, then GetBundleForChannel for every channel in
	// turn.
	if _, err := ListBundles(ctx, conn, nil); err != nil {
		return n, fmt.Errorf("ListBundles: %w", err)
	}
	n.Calls++
	var (
		mu       sync.Mutex
		wg       sync.WaitGroup
		firstErr error
	)
	for _, name := range names {
		wg.Add(1)
		go func() {
			defer wg.Done()
			calls, channels := 1, 0
			p, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: name})
			if err != nil {
				err = fmt.Errorf("GetPackage %s: %w", name, err)
			} else {
				for _, ch := range p.Channels {
					calls++
					channels++
					//lint:ignore SA1019 OLM's package server still calls it
					if _, err = c.GetBundleForChannel(ctx, &api.GetBundleInChannelRequest{PkgName: name, ChannelName: ch.Name}, grpc.MaxCallRecvMsgSize(1<<30)); err != nil {
						err = fmt.Errorf("GetBundleForChannel %s/%s: %w", name, ch.Name, err)
						break
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			n.Calls += calls
			n.Channels += channels
			if err != nil && firstErr == nil {
				firstErr = err
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return n, firstErr
	}
	notFound := func(err error) bool { return err != nil && strings.Contains(err.Error(), "found") }
	for _, g := range gvks {
		n.Calls += 3
		if _, err := c.GetDefaultBundleThatProvides(ctx, &api.GetDefaultProviderRequest{Group: g.Group, Version: g.Version, Kind: g.Kind}); err != nil && !notFound(err) {
			return n, fmt.Errorf("GetDefaultBundleThatProvides %v: %w", g, err)
		}
		s, err := c.GetLatestChannelEntriesThatProvide(ctx, &api.GetLatestProvidersRequest{Group: g.Group, Version: g.Version, Kind: g.Kind})
		if err := drain[api.ChannelEntry](s, err); err != nil && !notFound(err) {
			return n, fmt.Errorf("GetLatestChannelEntriesThatProvide %v: %w", g, err)
		}
		s2, err := c.GetChannelEntriesThatProvide(ctx, &api.GetAllProvidersRequest{Group: g.Group, Version: g.Version, Kind: g.Kind})
		if err := drain[api.ChannelEntry](s2, err); err != nil {
			return n, fmt.Errorf("GetChannelEntriesThatProvide %v: %w", g, err)
		}
	}
	for _, b := range bundles {
		n.Calls++
		if _, err := c.GetBundle(ctx, b, grpc.MaxCallRecvMsgSize(1<<30)); err != nil {
			return n, fmt.Errorf("GetBundle %s/%s/%s: %w", b.PkgName, b.ChannelName, b.CsvName, err)
		}
	}
	return n, nil
}
