package catalog

import (
	"fmt"
	"io"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/catalogedit"
	ce "github.com/opmkit/opm/pkg/catalogedit"
)

// What the editing subcommands (promote, set-default-channel, add-bundle,
// remove-bundle, prune, deprecate) share: where the catalog is, --dry-run,
// --force, -o, and how a result is printed.

const editLong = `

The catalog (-C/--catalog, default: the current directory) is an FBC
directory, a single FBC file or a basic template (olm.template.basic); the
arguments are names, so -C is the only way to give it. A bundle can be
named by its version wherever its name is taken (a leading "v" is fine). Each change goes
into the file that holds the blob it changes, in that file's format and
style; every other byte stays as it is, and new blobs go where the
package's blobs of that kind live. The result is validated before anything
is written, and the files are replaced atomically: all of them or none.
The whole edit holds a lock on the catalog (its directory), so two edits
at once never lose one: the second waits for the first (--lock-wait, 20s
by default), then fails naming the process that holds it.

A catalog that does not validate is refused unless --force is given (the
edit must then add no problem of its own). --dry-run prints the unified
diff instead of writing; -o json prints what changed for scripts.`

type editFlags struct {
	common   action.Common
	output   string
	lockWait time.Duration
}

func addEditFlags(cmd *cobra.Command, f *editFlags) {
	cmdutil.AddCatalogFlag(cmd, &f.common.Catalog, ".", "FBC directory, FBC file or basic template to edit")
	fl := cmd.Flags()
	fl.BoolVar(&f.common.DryRun, "dry-run", false, "print the unified diff instead of writing")
	fl.BoolVar(&f.common.Force, "force", false, "edit a catalog that does not validate (the edit must add no problem); promote, add-bundle: accept new upgrade edges with unsafe CRD changes")
	fl.StringVarP(&f.output, "output", "o", "text", "output format (text|json)")
	fl.DurationVar(&f.lockWait, "lock-wait", ce.DefaultLockWait, "how long to wait for another edit of the same catalog to finish (0: fail at once)")
}

// run checks the shared flags, finds the catalog (-C, or the current
// directory), runs edit on it and prints the result.
func (f *editFlags) run(ios *cmdutil.IOStreams, cmd *cobra.Command, edit func(action.Common) (*action.Result, error)) error {
	if err := cmdutil.CheckOutput(f.output, "text", "json"); err != nil {
		return err
	}
	switch {
	case f.lockWait < 0:
		return cmdutil.FlagErrorf("--lock-wait must not be negative")
	case f.lockWait == 0:
		f.common.LockWait = -1 // do not wait
	default:
		f.common.LockWait = f.lockWait
	}
	if fl := cmd.Flags().Lookup("keep-edges"); fl != nil && fl.Changed {
		// Not pflag's MarkDeprecated, which prints on stdout.
		fmt.Fprintln(ios.ErrOut, "Flag --keep-edges has been deprecated: edges are kept by default; --drop-edges drops them")
	}
	cat, err := cmdutil.OneCatalog(cmd, "")
	if err != nil {
		return err
	}
	f.common.Catalog = cat.Refs[0]
	res, err := edit(f.common)
	if err != nil {
		return cat.Explain(err)
	}
	return printResult(ios, f, res)
}

// editNames completes the names of the catalog an edit verb edits (-C, or
// the current directory).
var editNames = cmdutil.CompleteFrom(cmdutil.OneCatalogRefs(-1))

// completeArgs completes an edit verb's arguments: each position's kind
// of name, "package" the package (the names that follow are its), or a
// trailing "..." repeating the last kind.
func completeArgs(kinds ...string) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		i := len(args)
		if n := len(kinds); kinds[n-1] == "..." {
			i = min(i, n-2)
		} else if i >= n {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		pkg := ""
		if p := slices.Index(kinds, "package"); p >= 0 && p < len(args) {
			pkg = args[p]
		}
		switch kinds[i] {
		case "package":
			return editNames.Packages(cmd, args, toComplete)
		case "channel":
			return editNames.Channels(cmd, args, toComplete, pkg, args...)
		case "bundle":
			return editNames.Bundles(cmd, args, toComplete, pkg, args...)
		}
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
}

// completeFlag completes an edit verb's flag with the channels or bundles
// of the package its first argument names.
func completeFlag(cmd *cobra.Command, flag, kind string) {
	_ = cmd.RegisterFlagCompletionFunc(flag, func(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		pkg := ""
		if len(args) > 0 {
			pkg = args[0]
		}
		if kind == "channel" {
			return editNames.Channels(cmd, args, toComplete, pkg)
		}
		return editNames.Bundles(cmd, args, toComplete, pkg)
	})
}

func edgeFlags(cmd *cobra.Command, e *ce.Edges) {
	fl := cmd.Flags()
	fl.StringVar(&e.Replaces, "replaces", "", "the bundle the new entry replaces (default: the channel head)")
	fl.StringSliceVar(&e.Skips, "skips", nil, "bundles the new entry skips (comma-separated or repeated)")
	fl.StringVar(&e.SkipRange, "skip-range", "", "the new entry's skipRange, e.g. '>=1.0.0 <1.2.0'")
	completeFlag(cmd, "replaces", "bundle")
	completeFlag(cmd, "skips", "bundle")
}

// dropEdgesFlags adds remove-bundle's and prune's --drop-edges, and the
// old opt-in --keep-edges, now the default: accepted (hidden), with a note
// (see run).
func dropEdgesFlags(cmd *cobra.Command, drop *bool) {
	fl := cmd.Flags()
	fl.BoolVar(drop, "drop-edges", false, "drop removed bundles' names from skips: their installs are left without an upgrade (by default the names are kept, so those installs still upgrade)")
	fl.Bool("keep-edges", false, "deprecated: edges are kept by default")
	_ = fl.MarkHidden("keep-edges")
	cmd.MarkFlagsMutuallyExclusive("keep-edges", "drop-edges")
}

// checkChannels refuses an empty channel name or one holding a comma in
// what flag (or, flag "", an argument) names: one rule wherever a channel
// is named on the command line, since lists of channels are
// comma-separated.
func checkChannels(flag string, names ...string) error {
	for _, n := range names {
		if err := ce.CheckChannelName(n); err != nil {
			if flag != "" {
				return cmdutil.FlagErrorf("%s: %v", flag, err)
			}
			return &cmdutil.FlagError{Err: err}
		}
	}
	return nil
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
	for _, n := range res.Notes {
		fmt.Fprintln(ios.ErrOut, n)
	}
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
	if len(res.KeptPaths) > 0 {
		fmt.Fprintln(summary, "installs that keep an upgrade path:")
		for _, k := range res.KeptPaths {
			fmt.Fprintln(summary, "  "+k.Message)
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
