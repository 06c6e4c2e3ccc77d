// Package validate implements `opm validate`.
package validate

import (
	"context"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/internal/buildinfo"
	"github.com/opmkit/opm/pkg/validate"
)

// Options are the flags and argument of `opm validate`.
type Options struct {
	IO     *cmdutil.IOStreams
	Global *cmdutil.GlobalOptions

	Ref       string
	Output    string
	Strict    bool
	SchemaDir string

	// The dependency check (pkg/validate CheckDependencies).
	CheckDependencies bool
	With              []string
}

// NewCmd builds `opm validate`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	opts := &Options{IO: ios, Global: g}
	cmd := &cobra.Command{
		Use:   "validate <directory|file|-|image>",
		Short: "Validate the declarative config JSON file(s) in a given directory",
		Long: `Validate a file-based catalog: every rule upstream opm enforces (same verdict,
same messages), opm's CUE schemas for every blob, and checks upstream lacks
(as warnings, errors under --strict).

The catalog is a directory (as upstream), a single file, - for standard
input (e.g. opm render ... | opm validate -), or a catalog image reference.

Without -o, problems are written to standard error: upstream's error tree with
the file and line of each problem, then every other finding. -o json and
-o yaml print upstream's {passed, error: {message}} with a findings array
beside it; -o github prints GitHub Actions annotations; -o sarif a SARIF 2.1.0
log.

Exit status: 0 valid (warnings allowed unless --strict), 1 invalid, 2 usage or
I/O error. See docs/validate.md for every rule code.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ref = args[0]
			return Run(cmd.Context(), opts)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&opts.Output, "output", "o", "", "output format (text|json|yaml|github|sarif; default text)")
	f.BoolVar(&opts.Strict, "strict", false, "treat warnings as errors")
	f.StringVar(&opts.SchemaDir, "schema-dir", "", "directory of extra CUE schemas (*.cue) for your own blob schemas")
	f.BoolVar(&opts.CheckDependencies, "check-dependencies", false, "resolve every channel head's dependencies as OLM classic does (a warning; an error under --strict)")
	f.StringArrayVar(&opts.With, "with", nil, "extra catalog dependencies may come from, for --check-dependencies (repeatable; implies it)")
	return cmd
}

// Run validates opts.Ref and writes the result.
func Run(ctx context.Context, opts *Options) error {
	if opts.Output != "" {
		if err := cmdutil.CheckOutput(opts.Output, validate.Formats...); err != nil {
			return err
		}
	}
	reg, err := opts.Global.Registry(opts.IO)
	if err != nil {
		return err
	}
	schemas, err := validate.LoadSchemas(opts.SchemaDir)
	if err != nil {
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
	}

	var res *validate.Result
	cfg, err := validate.LoadInput(ctx, opts.Ref, opts.IO.In, reg)
	switch {
	case err != nil && validate.IsContentError(err):
		res = validate.LoadErrorResult(err)
	case err != nil:
		return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
	default:
		vopts := validate.Options{Strict: opts.Strict, Schemas: schemas}
		if opts.CheckDependencies || len(opts.With) > 0 {
			if vopts.Dependencies, err = validate.LoadDependencyCatalogs(ctx, opts.With, reg); err != nil {
				return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
			}
		}
		res, err = validate.Validate(ctx, cfg, vopts)
		if err != nil {
			return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
		}
	}

	info := buildinfo.Get()
	tool := validate.ToolInfo{Name: "opm", Version: info.Version, InformationURI: "https://github.com/opmkit/opm"}
	switch opts.Output {
	case "", "text":
		if len(res.Findings) > 0 || !res.Passed {
			if err := validate.WriteText(opts.IO.ErrOut, res); err != nil {
				return err
			}
			if res.Tree == nil && !res.Passed && !hasErrorFinding(res) {
				// Nothing else names the failure (cannot happen today).
				if _, err := opts.IO.ErrOut.Write([]byte(strings.TrimSpace(res.Message) + "\n")); err != nil {
					return err
				}
			}
		}
	default:
		if err := validate.Write(opts.IO.Out, res, opts.Output, tool); err != nil {
			return err
		}
	}
	if !res.Passed {
		return cmdutil.SilentExit(cmdutil.ExitFailure)
	}
	return nil
}

func hasErrorFinding(res *validate.Result) bool {
	errs, _ := res.Counts()
	return errs > 0
}
