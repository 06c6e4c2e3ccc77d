package render

import (
	"bufio"
	"bytes"
	"context"
	"errors"
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
	if err := declcfg.WriteContext(ctx, *cfg, w, format); err != nil {
		if ctx.Err() != nil {
			return err
		}
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
		if err != nil || !st.IsDir() || IsBundleDir(ref) {
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
	// Each package is encoded ahead into memory up to maxBufferedOutput;
	// one whose output is larger (a few kilobytes of deeply nested blobs
	// indent to gigabytes) is encoded again when its turn comes, straight
	// to the output, so that memory stays bounded whatever the output's
	// size. Writes check ctx, so that a signal stops a long write.
	out := &declcfg.ContextWriter{Ctx: ctx, W: bw}
	err := orderedGroups(ctx, len(groups), runtime.GOMAXPROCS(0), func(ctx context.Context, i int) (groupOutput, error) {
		cfg, err := ixs.load(ctx, groups[i])
		if err != nil {
			return groupOutput{}, err
		}
		buf, _ := pool.Get().(*bytes.Buffer)
		if buf == nil {
			buf = new(bytes.Buffer)
		}
		buf.Reset()
		lw := &limitedWriter{ctx: ctx, w: buf, left: maxBufferedOutput}
		if err := declcfg.Write(*cfg, lw, format); err != nil {
			if errors.Is(err, errOutputTooLarge) {
				pool.Put(buf)
				return groupOutput{cfg: cfg}, nil
			}
			return groupOutput{}, err
		}
		return groupOutput{out: buf.Bytes()}, nil
	}, func(g groupOutput) error {
		var err error
		if g.cfg != nil {
			err = declcfg.Write(*g.cfg, out, format)
		} else {
			_, err = out.Write(g.out)
			if cap(g.out) <= maxPooledOutput {
				pool.Put(bytes.NewBuffer(g.out[:0]))
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
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

// maxBufferedOutput is the most of a package's output encoded ahead into
// memory; a larger package is written straight to the output.
const maxBufferedOutput = 32 << 20

// groupOutput is one package ready to write: its encoded bytes, or, when
// they were too large to hold, the package itself.
type groupOutput struct {
	out []byte
	cfg *declcfg.DeclarativeConfig
}

var errOutputTooLarge = errors.New("output too large to buffer")

// limitedWriter fails with errOutputTooLarge once more than left bytes
// are written, and with ctx's error once ctx is done.
type limitedWriter struct {
	ctx  context.Context
	w    io.Writer
	left int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if err := l.ctx.Err(); err != nil {
		return 0, err
	}
	if len(p) > l.left {
		return 0, errOutputTooLarge
	}
	l.left -= len(p)
	return l.w.Write(p)
}

// orderedGroups runs produce for 0..n-1 on up to conc goroutines, at most
// conc results ahead of consume, which gets them in order. It stops at the
// first error (of either) and returns it.
func orderedGroups[T any](ctx context.Context, n, conc int, produce func(context.Context, int) (T, error), consume func(T) error) error {
	if conc < 1 {
		conc = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type slot struct {
		done chan struct{}
		out  T
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
		var zero T
		slots[i].out = zero
		<-tokens
		if err != nil {
			cancel()
			return err
		}
	}
	return nil
}
