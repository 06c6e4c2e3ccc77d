package render

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"runtime"
	"sort"
	"sync"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/migrations"
)

// Write renders opts.Refs and writes the blobs to w in format, exactly as
// Render followed by declcfg.Write would. Errors writing to w are wrapped
// as "write output: ...".
//
// When every reference is a file-based catalog directory and no migration
// is asked for, it streams: the directories are indexed first (every file
// decoded and checked, so that a bad file fails the render before anything
// is written), then each package is decoded again, in output order, from
// its own byte ranges, written and dropped. Peak memory then grows with the
// largest package rather than with the catalog, and packages are decoded
// and encoded on every CPU while the previous ones are written. Anything
// else (images, bundles, migrations, derived channels) is rendered whole.
func Write(ctx context.Context, opts Options, w io.Writer, format declcfg.Format) error {
	if format != declcfg.FormatJSON && format != declcfg.FormatYAML {
		return fmt.Errorf("unknown format %q", format)
	}
	if streamable(opts) {
		return writeStream(ctx, opts, w, format)
	}
	cfg, err := Render(ctx, opts)
	if err != nil {
		return err
	}
	if err := declcfg.Write(*cfg, w, format); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// streamable reports whether every reference is a catalog directory that
// needs nothing but loading.
func streamable(opts Options) bool {
	if opts.WithChannels || len(opts.Refs) == 0 {
		return false
	}
	if lvl := opts.MigrationLevel; lvl != "" && lvl != migrations.LevelNone {
		return false
	}
	if opts.AllowedRefMask != 0 && opts.AllowedRefMask&RefDCDir == 0 {
		return false
	}
	for _, ref := range opts.Refs {
		st, err := os.Stat(ref)
		if err != nil || !st.IsDir() || isBundleDir(ref) {
			return false
		}
	}
	return true
}

// catalogIndexes are the indexes of several references, rendered as their
// concatenation.
type catalogIndexes []*declcfg.Index

func (c catalogIndexes) close() {
	for _, ix := range c {
		ix.Close()
	}
}

// groups returns every package name in output order: sorted, with ""
// (blobs of no package) last.
func (c catalogIndexes) groups() []string {
	seen := map[string]bool{}
	var names []string
	for _, ix := range c {
		for _, g := range ix.Groups() {
			if !seen[g] {
				seen[g] = true
				names = append(names, g)
			}
		}
	}
	sort.Strings(names)
	if len(names) > 0 && names[0] == "" {
		names = append(names[1:], "")
	}
	return names
}

// load decodes group from every index, in reference order, with the
// per-reference ordering Render applies.
func (c catalogIndexes) load(ctx context.Context, group string) (*declcfg.DeclarativeConfig, error) {
	out := &declcfg.DeclarativeConfig{}
	for _, ix := range c {
		cfg, err := ix.LoadGroup(ctx, group)
		if err != nil {
			return nil, err
		}
		moveBundleObjectsToEnd(cfg)
		sortRelatedImages(cfg)
		out.Merge(cfg)
	}
	return out, nil
}

// writeStream is Write for references that are all catalog directories.
func writeStream(ctx context.Context, opts Options, w io.Writer, format declcfg.Format) error {
	var ixs catalogIndexes
	defer func() { ixs.close() }()
	for _, ref := range opts.Refs {
		ix, err := declcfg.IndexDir(ctx, ref)
		if err != nil {
			return fmt.Errorf("render reference %q: %w", ref, err)
		}
		ixs = append(ixs, ix)
	}
	groups := ixs.groups()
	// Small outputs leave in one write at the end, as a whole render's
	// did (so a reader that stops early, like head, leaves no write
	// pending); large ones in chunks of this size.
	bw := bufio.NewWriterSize(w, streamBuffer)
	// Output buffers go back to the pool once written.
	var pool sync.Pool
	err := orderedGroups(ctx, len(groups), runtime.GOMAXPROCS(0), func(ctx context.Context, i int) ([]byte, error) {
		cfg, err := ixs.load(ctx, groups[i])
		if err != nil {
			return nil, err
		}
		buf, _ := pool.Get().(*bytes.Buffer)
		if buf == nil {
			buf = new(bytes.Buffer)
		}
		buf.Reset()
		if err := declcfg.Write(*cfg, buf, format); err != nil {
			return nil, err
		}
		return buf.Bytes(), nil
	}, func(out []byte) error {
		_, err := bw.Write(out)
		if cap(out) <= maxPooledOutput {
			pool.Put(bytes.NewBuffer(out[:0]))
		}
		if err != nil {
			return fmt.Errorf("write output: %w", err)
		}
		return nil
	})
	if err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write output: %w", err)
	}
	return nil
}

// streamBuffer is the size of the output buffer of a streamed render.
const streamBuffer = 1 << 20

// Output buffers are kept for reuse up to this size.
const maxPooledOutput = 64 << 20

// orderedGroups runs produce for 0..n-1 on up to conc goroutines, at most
// conc results ahead of consume, which gets them in order. It stops at the
// first error (of either) and returns it.
func orderedGroups(ctx context.Context, n, conc int, produce func(context.Context, int) ([]byte, error), consume func([]byte) error) error {
	if conc < 1 {
		conc = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type slot struct {
		done chan struct{}
		out  []byte
		err  error
	}
	slots := make([]slot, n)
	for i := range slots {
		slots[i].done = make(chan struct{})
	}
	tokens := make(chan struct{}, conc)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; i < n; i++ {
			select {
			case tokens <- struct{}{}:
			case <-ctx.Done():
				for ; i < n; i++ {
					slots[i].err = ctx.Err()
					close(slots[i].done)
				}
				return
			}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				slots[i].out, slots[i].err = produce(ctx, i)
				close(slots[i].done)
			}(i)
		}
	}()
	defer wg.Wait()
	for i := 0; i < n; i++ {
		<-slots[i].done
		if err := slots[i].err; err != nil {
			cancel()
			return err
		}
		err := consume(slots[i].out)
		slots[i].out = nil
		<-tokens
		if err != nil {
			cancel()
			return err
		}
	}
	return nil
}
