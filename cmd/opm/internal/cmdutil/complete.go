package cmdutil

import (
	"context"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/internal/nameorder"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/migrations"
)

// Shell completion (cobra's dynamic completion, `opm completion SHELL`).
//
// Flag values: a flag whose usage lists its values as "(a|b|c)" completes
// them (CompleteEnumFlags, for every command at once). Names: package,
// channel and bundle names are read from the catalog the command line
// names, when it is a local directory or file (an image is never pulled
// for a completion), within a time and a size bound, errors swallowed: a
// huge or hostile catalog gives no completions rather than a hung shell.

const (
	// completionTimeout bounds reading a catalog for one completion.
	completionTimeout = 2 * time.Second
	// completionMaxFileSize bounds each file read for a completion.
	completionMaxFileSize = 16 << 20
)

// enumRE finds the values a usage lists: "(json|yaml)", "(text|json; ...)".
var enumRE = regexp.MustCompile(`\(([a-z0-9][a-z0-9.-]*(?:\|[a-z0-9][a-z0-9.-]*)+)[;)]`)

// CompleteEnumFlags registers, on cmd and its subcommands, the completion
// of every flag whose usage lists its values as "(a|b|c)" and that has no
// completion of its own.
func CompleteEnumFlags(cmd *cobra.Command) {
	cmd.LocalNonPersistentFlags().VisitAll(func(f *pflag.Flag) {
		if _, ok := cmd.GetFlagCompletionFunc(f.Name); ok {
			return
		}
		if f.Name == "migrate-level" {
			var levels []cobra.Completion
			for _, m := range migrations.Migrations {
				levels = append(levels, cobra.CompletionWithDesc(m.Name, m.Help))
			}
			_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(levels, cobra.ShellCompDirectiveNoFileComp))
			return
		}
		m := enumRE.FindStringSubmatch(f.Usage)
		if m == nil {
			return
		}
		_ = cmd.RegisterFlagCompletionFunc(f.Name, cobra.FixedCompletions(strings.Split(m[1], "|"), cobra.ShellCompDirectiveNoFileComp))
	})
	for _, c := range cmd.Commands() {
		CompleteEnumFlags(c)
	}
}

// CatalogRefs returns the catalogs a command line names, for completion
// (as the command would read them: see OneCatalog and Catalogs).
type CatalogRefs func(cmd *cobra.Command, args []string) []string

// OneCatalogRefs is CatalogRefs for a command whose catalog is its argument
// at index arg (-1: none), -C or the current directory.
func OneCatalogRefs(arg int) CatalogRefs {
	return func(cmd *cobra.Command, args []string) []string {
		a := ""
		if arg >= 0 && arg < len(args) {
			a = args[arg]
		}
		c, err := OneCatalog(cmd, a)
		if err != nil {
			return nil
		}
		return c.Refs
	}
}

// ManyCatalogRefs is CatalogRefs for a command whose arguments are
// catalogs (and -C one more).
func ManyCatalogRefs(cmd *cobra.Command, args []string) []string {
	c, err := Catalogs(cmd, args, 1)
	if err != nil {
		return nil
	}
	return c.Refs
}

// completionCatalog reads the local catalogs of refs within the bounds of
// completion; what cannot be read is left out.
func completionCatalog(refs []string) *declcfg.DeclarativeConfig {
	ctx, cancel := context.WithTimeout(context.Background(), completionTimeout)
	defer cancel()
	ctx = declcfg.WithMaxFileSize(ctx, completionMaxFileSize)
	out := &declcfg.DeclarativeConfig{}
	for _, ref := range refs {
		st, err := os.Stat(ref)
		if err != nil {
			continue // an image reference, or nothing
		}
		var cfg *declcfg.DeclarativeConfig
		switch {
		case st.IsDir():
			cfg, err = declcfg.LoadDir(ctx, ref)
		case st.Mode().IsRegular():
			cfg, err = declcfg.LoadPath(ctx, ref)
		default:
			continue
		}
		if err != nil || cfg == nil {
			continue
		}
		out.Packages = append(out.Packages, cfg.Packages...)
		out.Channels = append(out.Channels, cfg.Channels...)
		out.Bundles = append(out.Bundles, cfg.Bundles...)
	}
	return out
}

// names returns the unique names that start with prefix and are not in
// except, in nameorder (stable-3.6 before stable-3.10): completions are
// returned with cobra.ShellCompDirectiveKeepOrder, so the shell keeps it.
func names(all []string, prefix string, except []string) []string {
	var out []string
	for _, n := range all {
		if strings.HasPrefix(n, prefix) && !slices.Contains(except, n) {
			out = append(out, n)
		}
	}
	nameorder.Sort(out)
	return slices.Compact(out)
}

// namesDirective is the directive of name completions: no file names, and
// the order given (the shells sort byte by byte otherwise).
const namesDirective = cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveKeepOrder

// Completion lists, for one completion, names from the catalogs of refs.
type Completion struct {
	refs CatalogRefs
}

// CompleteFrom returns completions reading the catalogs refs names.
func CompleteFrom(refs CatalogRefs) Completion { return Completion{refs: refs} }

func (c Completion) catalog(cmd *cobra.Command, args []string) *declcfg.DeclarativeConfig {
	return completionCatalog(c.refs(cmd, args))
}

// Packages completes package names (except those already in except).
func (c Completion) Packages(cmd *cobra.Command, args []string, toComplete string, except ...string) ([]string, cobra.ShellCompDirective) {
	return c.complete(cmd, args, toComplete, except, func(cfg *declcfg.DeclarativeConfig, add func(pkg, name string)) {
		for _, p := range cfg.Packages {
			add("", p.Name)
		}
	}, "")
}

// Channels completes the channel names of pkg (every package's when pkg
// is "").
func (c Completion) Channels(cmd *cobra.Command, args []string, toComplete, pkg string, except ...string) ([]string, cobra.ShellCompDirective) {
	return c.complete(cmd, args, toComplete, except, func(cfg *declcfg.DeclarativeConfig, add func(pkg, name string)) {
		for _, ch := range cfg.Channels {
			add(ch.Package, ch.Name)
		}
	}, pkg)
}

// Versions completes what names an installed bundle: the bundle names of
// pkg (every package's when pkg is "") and their versions, so that
// "--from 3.17<Tab>" offers 3.17.0, 3.17.1, ...
func (c Completion) Versions(cmd *cobra.Command, args []string, toComplete, pkg string) ([]string, cobra.ShellCompDirective) {
	return c.complete(cmd, args, toComplete, nil, func(cfg *declcfg.DeclarativeConfig, add func(pkg, name string)) {
		for i := range cfg.Bundles {
			b := &cfg.Bundles[i]
			add(b.Package, b.Name)
			if v, err := graph.BundleVersion(b); err == nil {
				add(b.Package, v.String())
			}
		}
	}, pkg)
}

// Bundles completes the bundle names of pkg (every package's when pkg is
// "").
func (c Completion) Bundles(cmd *cobra.Command, args []string, toComplete, pkg string, except ...string) ([]string, cobra.ShellCompDirective) {
	return c.complete(cmd, args, toComplete, except, func(cfg *declcfg.DeclarativeConfig, add func(pkg, name string)) {
		for _, b := range cfg.Bundles {
			add(b.Package, b.Name)
		}
	}, pkg)
}

// complete lists the names each gives (of package pkg, when it is not
// "") that start with toComplete and are not in except.
func (c Completion) complete(cmd *cobra.Command, args []string, toComplete string, except []string, each func(*declcfg.DeclarativeConfig, func(pkg, name string)), pkg string) ([]string, cobra.ShellCompDirective) {
	var all []string
	each(c.catalog(cmd, args), func(p, name string) {
		if pkg == "" || p == pkg {
			all = append(all, name)
		}
	})
	return names(all, toComplete, except), namesDirective
}

// FlagValue returns the value of cmd's flag name, or "" (for completions
// that depend on another flag, e.g. the channels of --package).
func FlagValue(cmd *cobra.Command, name string) string {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		return ""
	}
	if sv, ok := f.Value.(interface{ GetSlice() []string }); ok {
		if s := sv.GetSlice(); len(s) > 0 {
			return s[0]
		}
		return ""
	}
	return f.Value.String()
}
