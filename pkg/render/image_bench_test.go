//go:build unix

package render

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/opmkit/opm/internal/registrytest"
)

// BenchmarkRenderBundleImages renders 50 bundle images from a local
// registry in one call: with a cold cache (every blob downloaded), a warm
// one (no blob downloaded: blobGETs/op must be 0), and cold with the
// concurrent prefetch (images rendered 4 at a time before the ordered loop). The bundles are the conformance suite's when it is
// present, else copies of a test bundle.
func BenchmarkRenderBundleImages(b *testing.B) {
	reg := registrytest.New(b)
	dirs, _ := filepath.Glob(filepath.Join(conformanceDir, "bundle", "*", "input"))
	sort.Strings(dirs)
	var refs []string
	for i := 0; i < 50; i++ {
		dir, prefix := filepath.Join("testdata", "image", "bundle"), ""
		labels := map[string]string{BundlePackageLabel: "x", "n": fmt.Sprint(i)}
		if len(dirs) > 0 {
			dir = dirs[i%len(dirs)]
		}
		img, err := registrytest.DirImage(dir, prefix, labels)
		if err != nil {
			b.Fatal(err)
		}
		ref := fmt.Sprintf("%s/bundles/b%02d:v1", reg.Host, i)
		if err := registrytest.Push(context.Background(), ref, img); err != nil {
			b.Fatal(err)
		}
		refs = append(refs, ref)
	}
	ctx := context.Background()
	run := func(b *testing.B, cache func() string, prefetch bool) {
		var gets int64
		cpu0 := cpuSeconds()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			opts := Options{Refs: refs, Registry: RegistryOptions{CacheDir: cache()}}
			before := reg.BlobGets()
			b.StartTimer()
			if _, err := render(ctx, opts, prefetch); err != nil {
				b.Fatal(err)
			}
			gets += reg.BlobGets() - before
		}
		b.ReportMetric(float64(gets)/float64(b.N), "blobGETs/op")
		// CPU time of the process (renderer and in-process registry), which
		// a loaded machine inflates less than wall time.
		b.ReportMetric((cpuSeconds()-cpu0)/float64(b.N), "cpu-s/op")
	}
	b.Run("Cold", func(b *testing.B) { run(b, func() string { return b.TempDir() }, false) })
	b.Run("ColdPrefetch", func(b *testing.B) { run(b, func() string { return b.TempDir() }, true) })
	// A registry 20 ms away, as a remote one is: prefetching overlaps the
	// round trips of the 50 images.
	reg.Fault(func(http.ResponseWriter, *http.Request) bool {
		time.Sleep(20 * time.Millisecond)
		return false
	})
	b.Run("Cold20ms", func(b *testing.B) { run(b, func() string { return b.TempDir() }, false) })
	b.Run("ColdPrefetch20ms", func(b *testing.B) { run(b, func() string { return b.TempDir() }, true) })
	reg.Fault(nil)
	warm := b.TempDir()
	if _, err := Render(ctx, Options{Refs: refs, Registry: RegistryOptions{CacheDir: warm}}); err != nil {
		b.Fatal(err)
	}
	b.Run("Warm", func(b *testing.B) { run(b, func() string { return warm }, false) })
}

// cpuSeconds returns the user and system CPU time of the process.
func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}
