package catalog

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/catalogedit"
	ce "github.com/opmkit/opm/pkg/catalogedit"
)

// What the editing subcommands (promote, set-default-channel, add-bundle,
// remove-bundle, prune, deprecate) share: where the catalog is, --dry-run,
// --force, -o, and how a result is printed.

const editLong = `

The catalog (--catalog, default: the current directory) is an FBC directory,
a single FBC file or a basic template (olm.template.basic). Each change goes
into the file that holds the blob it changes, in that file's format and
style; every other byte stays as it is, and new blobs go where the
package's blobs of that kind live. The result is validated before anything
is written, and the files are replaced atomically: all of them or none.

A catalog that does not validate is refused unless --force is given (the
edit must then add no problem of its own). --dry-run prints the unified
diff instead of writing; -o json prints what changed for scripts.`

type editFlags struct {
	common action.Common
	output string
}

func addEditFlags(cmd *cobra.Command, f *editFlags) {
	fl := cmd.Flags()
	fl.StringVarP(&f.common.Catalog, "catalog", "C", ".", "FBC directory, FBC file or basic template to edit")
	fl.BoolVar(&f.common.DryRun, "dry-run", false, "print the unified diff instead of writing")
	fl.BoolVar(&f.common.Force, "force", false, "edit a catalog that does not validate (the edit must add no problem); promote, add-bundle: accept new upgrade edges with unsafe CRD changes")
	fl.StringVarP(&f.output, "output", "o", "text", "output format (text|json)")
}

func (f *editFlags) check() error {
	return cmdutil.CheckOutput(f.output, "text", "json")
}

func edgeFlags(cmd *cobra.Command, e *ce.Edges) {
	fl := cmd.Flags()
	fl.StringVar(&e.Replaces, "replaces", "", "the bundle the new entry replaces (default: the channel head)")
	fl.StringSliceVar(&e.Skips, "skips", nil, "bundles the new entry skips (comma-separated or repeated)")
	fl.StringVar(&e.SkipRange, "skip-range", "", "the new entry's skipRange, e.g. '>=1.0.0 <1.2.0'")
}

func checkEdges(e ce.Edges) error {
	if err := e.Check(); err != nil {
		return &cmdutil.FlagError{Err: err}
	}
	return nil
}

// printResult prints a result: the diff on stdout for a dry run (the
// summary then goes to stderr), else the summary on stdout; -o json prints
// the whole result.
func printResult(ios *cmdutil.IOStreams, f *editFlags, res *action.Result) error {
	if f.output == "json" {
		return cmdutil.WriteJSON(ios.Out, res)
	}
	summary := ios.Out
	if res.DryRun {
		if _, err := io.WriteString(ios.Out, res.Diff()); err != nil {
			return err
		}
		summary = ios.ErrOut
	}
	for _, ch := range res.Changes {
		fmt.Fprintln(summary, ch.Message)
	}
	if len(res.UnsafeCRDUpgrades) > 0 {
		fmt.Fprintln(summary, "unsafe CRD upgrades made anyway (--force):")
		for _, e := range res.UnsafeCRDUpgrades {
			fmt.Fprintln(summary, "  "+action.DescribeCRDEdge(e))
		}
	}
	if len(res.LostPaths) > 0 {
		fmt.Fprintln(summary, "lost upgrade paths:")
		for _, l := range res.LostPaths {
			fmt.Fprintln(summary, "  "+l.Message)
		}
	}
	switch {
	case len(res.Files) == 0:
		fmt.Fprintln(summary, "nothing to change")
	case res.DryRun:
		for _, fl := range res.Files {
			fmt.Fprintf(summary, "would write %s (%s)\n", fl.Path, fl.Action)
		}
	default:
		for _, fl := range res.Files {
			fmt.Fprintf(summary, "wrote %s (%s)\n", fl.Path, fl.Action)
		}
	}
	return nil
}
