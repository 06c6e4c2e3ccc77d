// Package cmdutil holds what every opm command shares: the I/O streams, the
// typed errors that decide exit codes, and output-format helpers.
package cmdutil

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"

	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
)

// IOStreams are the streams a command reads and writes. Commands never touch
// os.Stdout or os.Stderr directly, so tests can run them in-process.
type IOStreams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// System returns the process's standard streams.
func System() *IOStreams {
	return &IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
}

// IsTerminal reports whether w is a terminal (progress output is only shown
// on terminals).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Exit codes.
const (
	ExitOK      = 0
	ExitFailure = 1
	ExitUsage   = 2
)

// FlagError is a usage error: bad flags, arguments or flag combinations.
// main prints it with a hint to run --help and exits with ExitUsage. It is
// the action layer's [action.UsageError], so an action's refusal of its
// options and a command's refusal of its flags are one kind of error.
type FlagError = action.UsageError

// FlagErrorf builds a FlagError.
func FlagErrorf(format string, args ...any) error {
	return &FlagError{Err: fmt.Errorf(format, args...)}
}

// ExitError carries an explicit exit code. If Err is nil the command has
// already printed everything it wanted to (e.g. a failed validation report)
// and main prints nothing more.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// SilentExit returns an error that makes main exit with code without
// printing anything.
func SilentExit(code int) error { return &ExitError{Code: code} }

// ExitCode maps an error returned by a command to the process exit code.
func ExitCode(err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	var fe *FlagError
	if errors.As(err, &fe) {
		return ExitUsage
	}
	return ExitFailure
}

// ShouldPrint reports whether main should print err.
func ShouldPrint(err error) bool {
	var ee *ExitError
	if errors.As(err, &ee) && ee.Err == nil {
		return false
	}
	return err != nil
}

// CheckOutput returns a FlagError unless format is one of allowed, using
// upstream's wording.
func CheckOutput(format string, allowed ...string) error {
	for _, a := range allowed {
		if format == a {
			return nil
		}
	}
	list := ""
	for i, a := range allowed {
		if i > 0 {
			list += "|"
		}
		list += a
	}
	return FlagErrorf("invalid --output value %q, expected (%s)", format, list)
}

// WriteJSON writes v as 2-space indented JSON followed by a newline, for
// -o json outputs that are ours (not upstream's FBC stream).
func WriteJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// GlobalOptions are the persistent flags defined on the root command and
// inherited by every subcommand.
type GlobalOptions struct {
	SkipTLSVerify bool
	UseHTTP       bool
	SkipTLS       bool // deprecated: behaves like UseHTTP
	// MaxFileSize is the largest catalog or bundle file read, in bytes
	// (0: no limit); root puts it in the command's context.
	MaxFileSize int64
	// MaxStdinSize is the most read of standard input in all, in bytes
	// (0: no limit); root puts it in the command's context.
	MaxStdinSize int64
	// ImageLimits are the limits on images (--image-limits, KEY=SIZE,...;
	// see image.ParseLimits), applied by Registry.
	ImageLimits string
	// FollowExternalSymlinks follows symbolic links that lead out of a
	// catalog or bundle directory; root puts it in the command's context.
	FollowExternalSymlinks bool
}

// TLS resolves the TLS flags as upstream does, rejecting the same three
// combinations with the same messages.
func (g *GlobalOptions) TLS() (skipTLSVerify, useHTTP bool, err error) {
	switch {
	case g.SkipTLS && g.UseHTTP:
		return false, false, FlagErrorf("invalid flag combination: cannot use --use-http with --skip-tls")
	case g.SkipTLS && g.SkipTLSVerify:
		return false, false, FlagErrorf("invalid flag combination: cannot use --skip-tls-verify with --skip-tls")
	case g.SkipTLSVerify && g.UseHTTP:
		return false, false, FlagErrorf("invalid flag combination: --use-http and --skip-tls-verify cannot both be true")
	}
	if g.SkipTLS {
		return false, true, nil
	}
	return g.SkipTLSVerify, g.UseHTTP, nil
}

// Registry returns the registry options the global flags select, with
// progress on ios.ErrOut when it is a terminal. A nil receiver (as in
// tests that build Options by hand) means the defaults.
func (g *GlobalOptions) Registry(ios *IOStreams) (render.RegistryOptions, error) {
	var reg render.RegistryOptions
	if g != nil {
		skipVerify, useHTTP, err := g.TLS()
		if err != nil {
			return reg, err
		}
		reg.SkipTLSVerify, reg.UseHTTP = skipVerify, useHTTP
		if reg.Limits, err = image.ParseLimits(g.ImageLimits); err != nil {
			return reg, FlagErrorf("invalid --image-limits: %v", err)
		}
	}
	if ios != nil && IsTerminal(ios.ErrOut) {
		reg.Progress = ios.ErrOut
	}
	return reg, nil
}
