// Package serve implements `opm serve`.
package serve

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/internal/logfmt"
	"github.com/opmkit/opm/pkg/action/serve"
	pkgserve "github.com/opmkit/opm/pkg/serve"
)

// Options are the flags of `opm serve`.
type Options struct {
	IO     *cmdutil.IOStreams
	Global *cmdutil.GlobalOptions

	Ref                   string
	Port                  string
	TerminationLog        string
	Debug                 bool
	PprofAddr             string
	CaptureProfiles       bool
	CacheDir              string
	CacheOnly             bool
	CacheEnforceIntegrity bool
	HTTPAddr              string
	MaxConnections        int
	CAFile                string
	Platform              string
	LogFormat             string
}

// maxTerminationMessage is what Kubernetes reads of a termination log.
const maxTerminationMessage = 4096

// NewCmd builds `opm serve`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	opts := &Options{IO: ios, Global: g}
	cmd := &cobra.Command{
		Use:   "serve <source_path>",
		Short: "serve declarative configs",
		Long: `Serve a file-based catalog over gRPC, as OLM's catalog pods expect:
the api.Registry and api.ExperimentalRegistry services, the grpc.health.v1
health service and server reflection. With --http-addr it also serves
catalogd's HTTP API (/api/v1/all and /api/v1/metas).

The source is a catalog directory, or a catalog image reference when no such
path exists. The catalog is validated as 'opm validate' does; a catalog that
fails is refused before the server listens.

Logs go to standard error in upstream's shape (time="..." level=info
msg="..." key=value, fields sorted), so log scrapers written for upstream's
catalog pods keep working; --log-format json writes one JSON object a line.

The index is built at start-up (no cache is needed); --cache-dir keeps it
between runs. A cache that does not match the catalog, or that another opm
version wrote, is rebuilt with a warning, unless --cache-enforce-integrity
is given.`,
		Example: `  # Serve a catalog directory on port 50051
  opm serve examples/catalog

  # Build the cache in a catalog image build, then serve from it
  opm serve /configs --cache-dir=/tmp/cache --cache-only
  opm serve /configs --cache-dir=/tmp/cache

  # Also serve catalogd's HTTP API
  opm serve examples/catalog --http-addr=127.0.0.1:8080`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return Run(cmd, opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Port, "port", "p", "50051", "port number to serve on (or HOST:PORT)")
	f.StringVarP(&opts.TerminationLog, "termination-log", "t", "/dev/termination-log", "path to a container termination log file")
	f.BoolVar(&opts.Debug, "debug", false, "enable debug logging")
	f.StringVar(&opts.PprofAddr, "pprof-addr", "", "address of the pprof endpoint (empty: off)")
	f.BoolVar(&opts.CaptureProfiles, "pprof-capture-profiles", false, "capture a CPU profile of the start-up, served at /debug/pprof/startup/cpu")
	f.StringVar(&opts.CacheDir, "cache-dir", "", "directory of the serve cache (default: a temporary one)")
	f.BoolVar(&opts.CacheOnly, "cache-only", false, "build (or check) the cache and exit without serving")
	f.BoolVar(&opts.CacheEnforceIntegrity, "cache-enforce-integrity", false, "fail instead of rebuilding a cache that does not match the catalog (needs --cache-dir)")
	f.StringVar(&opts.HTTPAddr, "http-addr", "", "also serve catalogd's HTTP API on this address (empty: off)")
	f.IntVar(&opts.MaxConnections, "max-connections", pkgserve.DefaultMaxConnections, "most connections kept open at once on each address (gRPC, HTTP API); beyond, the one idle longest is closed to make room")
	f.StringVar(&opts.CAFile, "ca-file", "", "PEM file of certificate authorities to trust for registries (image sources)")
	f.StringVar(&opts.Platform, "platform", "", "platform (os/arch[/variant]) to pick from multi-arch images (default: this host's)")
	f.StringVar(&opts.LogFormat, "log-format", "text", "log format (text|json): upstream's logrus lines (time=\"...\" level=info msg=\"...\" key=value), or one JSON object a line")
	return cmd
}

// Run serves until the command's context is cancelled (SIGINT, SIGTERM).
func Run(cmd *cobra.Command, opts *Options) (err error) {
	ios := opts.IO
	if opts.PprofAddr == "" {
		// Nobody can ask for a heap profile: do not record one (the
		// profile's hash table alone costs a megabyte or more).
		runtime.MemProfileRate = 0
	}
	level := slog.LevelInfo
	if opts.Debug {
		level = slog.LevelDebug
	}
	log, err := logfmt.New(ios.ErrOut, opts.LogFormat, level)
	if err != nil {
		return &cmdutil.FlagError{Err: err}
	}

	// The termination log is opened first so that every fatal error can
	// be written to it; failing to open it is only a warning.
	var tlog io.WriteCloser
	if opts.TerminationLog != "" {
		f, ferr := os.OpenFile(opts.TerminationLog, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
		if ferr != nil {
			log.Warn("cannot open the termination log", "path", opts.TerminationLog, "error", ferr.Error())
		} else {
			tlog = f
			defer f.Close()
		}
	}
	defer func() {
		if err != nil && tlog != nil {
			msg := err.Error()
			if len(msg) > maxTerminationMessage-1 {
				msg = msg[:maxTerminationMessage-4] + "..."
			}
			_, _ = io.WriteString(tlog, msg+"\n")
		}
	}()

	addr := opts.Port
	if !strings.Contains(addr, ":") {
		addr = ":" + addr
	}
	if opts.MaxConnections < 1 {
		return cmdutil.FlagErrorf("--max-connections must be at least 1, not %d", opts.MaxConnections)
	}
	if opts.CacheEnforceIntegrity && opts.CacheDir == "" {
		return cmdutil.FlagErrorf("--cache-dir must be specified with --cache-enforce-integrity")
	}
	reg, err := opts.Global.Registry(ios)
	if err != nil {
		return err
	}
	reg.CAFile, reg.Platform = opts.CAFile, opts.Platform

	_, err = serve.Run(cmd.Context(), serve.Options{
		Ref:              opts.Ref,
		Addr:             addr,
		HTTPAddr:         opts.HTTPAddr,
		MaxConnections:   opts.MaxConnections,
		PprofAddr:        opts.PprofAddr,
		CaptureProfiles:  opts.CaptureProfiles,
		CacheDir:         opts.CacheDir,
		CacheOnly:        opts.CacheOnly,
		EnforceIntegrity: opts.CacheEnforceIntegrity,
		Registry:         reg,
		Log:              log,
	})
	if err != nil {
		var fe *cmdutil.FlagError
		if errors.As(err, &fe) {
			return err
		}
		return fmt.Errorf("serve %s: %w", opts.Ref, err)
	}
	return nil
}
