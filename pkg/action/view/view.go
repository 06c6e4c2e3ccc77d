// Package view is the action of `opm view`: it loads one catalog (or two,
// OLD and NEW, and their diff) and serves pkg/view's pages on 127.0.0.1
// until its context is cancelled.
package view

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/compose"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/view"
)

// Options configure [Load] and [Run].
type Options struct {
	// Refs are one catalog, or OLD and NEW: directories, FBC files,
	// catalog images, or "-" for standard input (one at most).
	Refs []string
	// Fragment and Semantics configure the diff of two catalogs as
	// `opm catalog diff --fragment --semantics` do (Semantics "" is
	// classic).
	Fragment  bool
	Semantics string
	// Port to listen on, on 127.0.0.1 (0: any free port).
	Port int
	// Stdin is read for "-".
	Stdin io.Reader
	// Registry configures pulls of catalog images.
	Registry render.RegistryOptions
	// Ready, when set, is called with the pages' URL once the server
	// listens.
	Ready func(url string)
}

// Loaded is what the server shows: the catalogs and, for two, their diff.
type Loaded struct {
	Catalogs []*view.Catalog
	Diff     *compose.Report
}

// Load reads the catalogs (through the code `opm catalog diff` and
// `opm graph` use) and, for two, compares them.
func Load(ctx context.Context, opts Options) (*Loaded, error) {
	switch len(opts.Refs) {
	case 1, 2:
	default:
		return nil, action.Usagef("give one catalog, or two (OLD and NEW) to see their differences; got %d", len(opts.Refs))
	}
	if len(opts.Refs) == 2 && opts.Refs[0] == "-" && opts.Refs[1] == "-" {
		return nil, action.Usagef("only one of OLD and NEW can be read from standard input")
	}
	if len(opts.Refs) == 1 && (opts.Fragment || opts.Semantics != "") {
		return nil, action.Usagef("--fragment and --semantics configure the diff of two catalogs")
	}
	if opts.Semantics == "" {
		opts.Semantics = string(graph.Classic)
	}
	sem, err := graph.ParseSemantics(opts.Semantics)
	if err != nil {
		return nil, action.Usagef("invalid --semantics: %v", err)
	}
	lo := compose.LoadOptions{Stdin: opts.Stdin, Registry: opts.Registry}
	out := &Loaded{}
	var sums []*compose.Summary
	for _, ref := range opts.Refs {
		// Errors name the file (and line) already.
		cfg, err := compose.Load(ctx, ref, lo)
		if err != nil {
			return nil, err
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var g *graph.Graph
		if len(opts.Refs) == 1 {
			if g, err = graph.New(cfg); err != nil {
				return nil, err
			}
		} else {
			s, err := compose.Summarize(cfg, ref)
			if err != nil {
				return nil, err
			}
			sums, g = append(sums, s), s.Graph
		}
		out.Catalogs = append(out.Catalogs, view.NewCatalog(ref, cfg, g))
	}
	if len(sums) == 2 {
		out.Diff, err = compose.Diff(sums[0], sums[1], compose.DiffOptions{Fragment: opts.Fragment, Semantics: sem})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Run loads the catalogs and serves their pages on 127.0.0.1 until ctx is
// cancelled.
func Run(ctx context.Context, opts Options) error {
	if opts.Port < 0 || opts.Port > 65535 {
		return action.Usagef("invalid --port %d: expected 0 (any free port) to 65535", opts.Port)
	}
	loaded, err := Load(ctx, opts)
	if err != nil {
		return err
	}
	lis, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(opts.Port)))
	if err != nil {
		return err
	}
	defer lis.Close()
	addr := lis.Addr().String()
	h, err := view.New(view.Options{Catalogs: loaded.Catalogs, Diff: loaded.Diff, Hosts: view.LoopbackHosts(addr)})
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      2 * time.Minute,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		BaseContext:       func(net.Listener) context.Context { return ctx },
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lis) }()
	if opts.Ready != nil {
		opts.Ready("http://" + addr + "/")
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		_ = srv.Close()
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
