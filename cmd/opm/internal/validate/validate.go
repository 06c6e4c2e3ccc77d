// Package validate implements `opm validate`: flags in, [validate.Run]
// once, the findings out in the format asked for.
package validate

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/internal/buildinfo"
	"github.com/opmkit/opm/pkg/action/validate"
	pkgvalidate "github.com/opmkit/opm/pkg/validate"
)

// NewCmd builds `opm validate`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts   validate.Options
		output string
	)
	cmd := &cobra.Command{
		Use:   "validate <directory|file|-|image>",
		Short: "Validate the declarative config JSON file(s) in a given directory",
		Long: `Validate a file-based catalog: every rule upstream opm enforces (same verdict,
same messages), opm's CUE schemas for every blob, and checks upstream lacks
(as warnings, errors under --strict).

The catalog is a directory (as upstream), a single file, - for standard
input (e.g. opm render ... | opm validate -), or a catalog image reference.
Standard input without any blob is an error (exit 2): it is what a failed
command before the pipe leaves; run pipes under set -o pipefail.

Without -o, problems are written to standard error: upstream's error tree with
the file and line of each problem, then every other finding. -o json and
-o yaml print upstream's {passed, error: {message}} with a findings array
beside it; -o github prints GitHub Actions annotations; -o sarif a SARIF 2.1.0
log.

Exit status: 0 valid (warnings allowed unless --strict), 1 invalid, 2 usage or
I/O error. See docs/validate.md for every rule code.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" {
				if err := cmdutil.CheckOutput(output, pkgvalidate.Formats...); err != nil {
					return err
				}
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts.Ref, opts.Stdin, opts.Registry = args[0], ios.In, reg
			res, err := validate.Run(cmd.Context(), opts)
			if err != nil {
				// Nothing was validated: the usage and I/O status.
				return &cmdutil.ExitError{Code: cmdutil.ExitUsage, Err: err}
			}
			return write(ios, res, output)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "output format (text|json|yaml|github|sarif; default text)")
	f.BoolVar(&opts.Strict, "strict", false, "treat warnings as errors")
	f.StringVar(&opts.SchemaDir, "schema-dir", "", "directory of extra CUE schemas (*.cue) for your own blob schemas")
	f.BoolVar(&opts.CheckDependencies, "check-dependencies", false, "resolve every channel head's dependencies as OLM classic does (a warning; an error under --strict)")
	f.StringArrayVar(&opts.With, "with", nil, "extra catalog dependencies may come from, for --check-dependencies (repeatable; implies it)")
	return cmd
}

// write prints res in the output format and returns the exit status for
// it: text goes to stderr (nothing for a clean catalog), the other formats
// to stdout.
func write(ios *cmdutil.IOStreams, res *pkgvalidate.Result, output string) error {
	info := buildinfo.Get()
	tool := pkgvalidate.ToolInfo{Name: "opm", Version: info.Version, InformationURI: "https://github.com/opmkit/opm"}
	switch output {
	case "", "text":
		if len(res.Findings) > 0 || !res.Passed {
			if err := pkgvalidate.WriteText(ios.ErrOut, res); err != nil {
				return err
			}
			if res.Tree == nil && !res.Passed && !hasErrorFinding(res) {
				// Nothing else names the failure (cannot happen today).
				if _, err := ios.ErrOut.Write([]byte(strings.TrimSpace(res.Message) + "\n")); err != nil {
					return err
				}
			}
		}
	default:
		if err := pkgvalidate.Write(ios.Out, res, output, tool); err != nil {
			return err
		}
	}
	if !res.Passed {
		return cmdutil.SilentExit(cmdutil.ExitFailure)
	}
	return nil
}

func hasErrorFinding(res *pkgvalidate.Result) bool {
	errs, _ := res.Counts()
	return errs > 0
}
