// Package graph implements `opm graph show|successors|path`: queries over
// the upgrade graphs of a catalog under OLM classic and OLM v1 semantics.
package graph

import (
	"context"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/declcfg"
	gr "github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/versionrange"
)

// Options are the arguments and flags shared by the graph commands, and
// those of each.
type Options struct {
	IO     *cmdutil.IOStreams
	Global *cmdutil.GlobalOptions

	Refs     []string
	Packages []string
	Channels []string
	Output   string

	// successors and path
	From string
	// path
	To        string
	Version   string
	Semantics string
}

// NewCmd builds `opm graph` and its subcommands.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "graph",
		Short: "Inspect and query the upgrade graphs of a catalog",
		Long: `The graph commands read a catalog (an FBC directory or a catalog image) and
answer questions about its upgrade graphs: what they look like (show), which
bundles upgrade directly from a version (successors), and the step by step
upgrade path from a version (path).

Upgrades are chosen under one of two semantics:

  classic  OLM classic (v0) subscriptions: the candidates are the entries on the
           channel's replaces chain (walked from the head; an entry that
           another entry skips is not on it) whose replaces or skips names the
           installed bundle or whose skipRange covers its version; the one
           closest to the head wins. One channel at a time (default: the
           package's default channel).
  v1       OLM v1 ClusterExtensions: every entry of the selected channels
           (default: all) whose replaces or skips names the installed bundle or
           whose skipRange covers its version; the highest version wins,
           deprecated bundles rank last, and it never moves to a lower version.

Both read skipRange as OLM classic does: pre-releases are versions like any
other, build metadata is ignored.`,
		Args: cobra.NoArgs,
	}
	cmd.AddCommand(newShowCmd(ios, g), newSuccessorsCmd(ios, g), newPathCmd(ios, g))
	return cmd
}

func addCommonFlags(cmd *cobra.Command, opts *Options, output, outputs, packageUsage string) {
	f := cmd.Flags()
	f.StringSliceVarP(&opts.Packages, "package", "p", nil, packageUsage)
	f.StringSliceVarP(&opts.Channels, "channel", "c", nil, "channel to query (repeatable)")
	f.StringVarP(&opts.Output, "output", "o", output, "output format ("+outputs+")")
}

func newShowCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	opts := &Options{IO: ios, Global: g}
	cmd := &cobra.Command{
		Use:   "show <catalog>...",
		Short: "Draw the upgrade graphs as Mermaid, Graphviz DOT or JSON",
		Long: `Draw the upgrade graphs of the selected packages and channels.

  -o mermaid  the same flowchart as 'opm alpha render-graph' (default)
  -o dot      Graphviz DOT: a cluster per package and channel; replaces edges
              solid, skips dashed red, skipRange dotted blue; the head bold,
              stranded entries orange, deprecated ones filled, names that
              edges refer to without a channel entry dashed
  -o json     every channel's entries (with versions), head, replaces chain,
              stranded entries, edges and problems, for jq`,
		Example: `  opm graph show ./catalog -p etcd -o dot | dot -Tsvg > etcd.svg
  opm graph show ./catalog -o json | jq '.packages[].channels[] | select(.stranded != [])'`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			return RunShow(cmd.Context(), opts)
		},
	}
	addCommonFlags(cmd, opts, "mermaid", "mermaid|dot|json", "package to draw (repeatable; default: all)")
	return cmd
}

func newSuccessorsCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	opts := &Options{IO: ios, Global: g}
	cmd := &cobra.Command{
		Use:   "successors <catalog>... --from VERSION",
		Short: "List the bundles that upgrade directly from a version",
		Long: `List every channel entry that upgrades directly from the installed bundle,
the fields that make it a successor (replaces, skips, skipRange), its place
on the channel's replaces chain, and which one each semantics picks.

--from takes a version or a bundle name. A version that no bundle of the
package has is still matched against skipRanges (an older release that left
the catalog); a bundle name that only replaces or skips mention is matched
against those.`,
		Example: `  opm graph successors ./catalog -p etcd --from 0.9.0
  opm graph successors ./catalog -p etcd --from etcdoperator.v0.9.0 -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			return RunSuccessors(cmd.Context(), opts)
		},
	}
	addCommonFlags(cmd, opts, "text", "text|json", "package to query (default: the catalog's only package)")
	cmd.Flags().StringVar(&opts.From, "from", "", "installed version or bundle name (required)")
	_ = cmd.MarkFlagRequired("from")
	return cmd
}

func newPathCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	opts := &Options{IO: ios, Global: g}
	cmd := &cobra.Command{
		Use:   "path <catalog>... --from VERSION [--to VERSION | --version RANGE]",
		Short: "Show the step by step upgrade path from a version",
		Long: `Show the upgrades OLM would make, one at a time, from the installed bundle.

Without a target the walk goes as far as the semantics allows: the channel
head (classic) or the newest version it can reach (v1). --to VERSION stops
at that version: classic follows its fixed walk and fails if the walk never
visits it; v1 considers only versions up to it at each step. --version RANGE
bounds the walk as a ClusterExtension's spec.version does (OLM v1 range
syntax: ">=1.11, <1.13", "1.11.x", "~1.12", "^2"): v1 only moves to versions in
it; classic stops at the last version in it.

Classic gives one path per channel (default: the package's default channel);
v1 one path over the selected channels (default: all). When a target is not
reached, the reason is printed and the exit code is 1.`,
		Example: `  opm graph path ./catalog -p etcd --from 0.9.0
  opm graph path ./catalog -p example --from 1.0.0 --to 2.0.0 --semantics v1
  opm graph path ./catalog -p example --from 1.0.0 --version '<3.0.0' --semantics v1 -o json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Refs = args
			return RunPath(cmd.Context(), opts)
		},
	}
	addCommonFlags(cmd, opts, "text", "text|json", "package to query (default: the catalog's only package)")
	f := cmd.Flags()
	f.StringVar(&opts.From, "from", "", "installed version or bundle name (required)")
	f.StringVar(&opts.To, "to", "", "version (or bundle name) to reach")
	f.StringVar(&opts.Version, "version", "", "OLM v1 version range every step must stay in")
	f.StringVar(&opts.Semantics, "semantics", string(gr.Classic), "upgrade semantics (classic|v1)")
	_ = cmd.MarkFlagRequired("from")
	cmd.MarkFlagsMutuallyExclusive("to", "version")
	return cmd
}

// load renders the references and builds their graph.
func load(ctx context.Context, opts *Options) (*declcfg.DeclarativeConfig, *gr.Graph, error) {
	ro := render.Options{Refs: opts.Refs, AllowedRefMask: render.RefDCDir | render.RefDCImage}
	reg, err := opts.Global.Registry(opts.IO)
	if err != nil {
		return nil, nil, err
	}
	ro.Registry = reg
	cfg, err := render.Render(ctx, ro)
	if err != nil {
		return nil, nil, err
	}
	g, err := gr.New(cfg)
	if err != nil {
		return nil, nil, err
	}
	return cfg, g, nil
}

// RunShow draws the selected graphs.
func RunShow(ctx context.Context, opts *Options) error {
	if err := cmdutil.CheckOutput(opts.Output, "mermaid", "dot", "json"); err != nil {
		return err
	}
	cfg, g, err := load(ctx, opts)
	if err != nil {
		return err
	}
	sel, err := g.Select(opts.Packages, opts.Channels)
	if err != nil {
		return err
	}
	switch opts.Output {
	case "dot":
		return gr.WriteDOT(sel, opts.IO.Out)
	case "json":
		return cmdutil.WriteJSON(opts.IO.Out, sel.JSON())
	}
	return gr.WriteMermaid(selectConfig(cfg, sel), opts.IO.Out, gr.MermaidOptions{Warnings: opts.IO.ErrOut})
}

// selectConfig keeps the blobs of cfg that belong to the selected packages
// and channels.
func selectConfig(cfg *declcfg.DeclarativeConfig, sel *gr.Graph) *declcfg.DeclarativeConfig {
	keep := map[string]map[string]bool{}
	for _, p := range sel.Packages {
		keep[p.Name] = map[string]bool{}
		for _, c := range p.Channels {
			keep[p.Name][c.Name] = true
		}
	}
	out := &declcfg.DeclarativeConfig{}
	for _, c := range cfg.Channels {
		if keep[c.Package][c.Name] {
			out.Channels = append(out.Channels, c)
		}
	}
	for _, b := range cfg.Bundles {
		if keep[b.Package] != nil {
			out.Bundles = append(out.Bundles, b)
		}
	}
	for _, d := range cfg.Deprecations {
		if keep[d.Package] != nil {
			out.Deprecations = append(out.Deprecations, d)
		}
	}
	return out
}

// loadFrom loads the catalog and resolves --from in the one package a
// successors or path query is about.
func loadFrom(ctx context.Context, opts *Options) (*gr.PackageGraph, gr.Installed, error) {
	_, g, err := load(ctx, opts)
	if err != nil {
		return nil, gr.Installed{}, err
	}
	p, err := onePackage(g, opts)
	if err != nil {
		return nil, gr.Installed{}, err
	}
	in, err := p.Resolve(opts.From)
	if err != nil {
		return nil, gr.Installed{}, err
	}
	return p, in, nil
}

// onePackage returns the package a successors or path query is about.
func onePackage(g *gr.Graph, opts *Options) (*gr.PackageGraph, error) {
	switch len(opts.Packages) {
	case 0:
		if len(g.Packages) == 1 {
			return g.Packages[0], nil
		}
		if len(g.Packages) == 0 {
			return nil, fmt.Errorf("the catalog has no packages")
		}
		return nil, cmdutil.FlagErrorf("the catalog has %d packages; choose one with --package (packages: %s)", len(g.Packages), strings.Join(g.PackageNames(), ", "))
	case 1:
		p := g.Package(opts.Packages[0])
		if p == nil {
			return nil, fmt.Errorf("no package %q in the catalog (packages: %s)", opts.Packages[0], strings.Join(g.PackageNames(), ", "))
		}
		return p, nil
	}
	return nil, cmdutil.FlagErrorf("this query takes one --package, got %d", len(opts.Packages))
}

// versionJSON is a bundle (name, when known) and its version (when known).
type versionJSON struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
}

func nodeJSON(n *gr.Node) versionJSON {
	return versionJSON{Name: n.Name, Version: n.VersionString()}
}

func installedJSON(in gr.Installed) versionJSON {
	v := versionJSON{Name: in.Name}
	if in.HasVersion {
		v.Version = in.Version.String()
	}
	return v
}

type edgeJSON struct {
	Kind  gr.EdgeKind `json:"kind"`
	Range string      `json:"range,omitempty"`
}

func edgesJSON(edges []gr.Edge) []edgeJSON {
	out := make([]edgeJSON, len(edges))
	for i, e := range edges {
		out[i] = edgeJSON{Kind: e.Kind, Range: e.Range}
	}
	return out
}

func edgesText(edges []gr.Edge) string {
	parts := make([]string, len(edges))
	for i, e := range edges {
		if e.Kind == gr.KindSkipRange {
			parts[i] = fmt.Sprintf("skipRange(%s)", e.Range)
		} else {
			parts[i] = string(e.Kind)
		}
	}
	return strings.Join(parts, ", ")
}

// RunSuccessors lists the direct successors of --from.
func RunSuccessors(ctx context.Context, opts *Options) error {
	if err := cmdutil.CheckOutput(opts.Output, "text", "json"); err != nil {
		return err
	}
	p, in, err := loadFrom(ctx, opts)
	if err != nil {
		return err
	}
	succ, err := p.Successors(in, opts.Channels)
	if err != nil {
		return err
	}
	if opts.Output == "json" {
		type row struct {
			Channel    string     `json:"channel"`
			Bundle     string     `json:"name"`
			Version    string     `json:"version,omitempty"`
			Deprecated bool       `json:"deprecated"`
			Edges      []edgeJSON `json:"edges"`
			ChainIndex *int       `json:"chainIndex"`
			Classic    bool       `json:"classic"`
			V1         bool       `json:"v1"`
			Lower      bool       `json:"lower"`
		}
		out := struct {
			Package    string      `json:"package"`
			From       versionJSON `json:"from"`
			Successors []row       `json:"successors"`
		}{Package: p.Name, From: installedJSON(in), Successors: []row{}}
		for _, s := range succ {
			r := row{Channel: s.Channel, Bundle: s.Node.Name, Version: s.Node.VersionString(), Deprecated: s.Node.Deprecated,
				Edges: edgesJSON(s.Edges), Classic: s.Classic, V1: s.V1, Lower: s.Lower}
			if s.ChainIndex >= 0 {
				i := s.ChainIndex
				r.ChainIndex = &i
			}
			out.Successors = append(out.Successors, r)
		}
		return cmdutil.WriteJSON(opts.IO.Out, out)
	}
	w := opts.IO.Out
	if len(succ) == 0 {
		_, err := fmt.Fprintf(w, "No bundle of package %q upgrades from %s.\n", p.Name, in.Label())
		return err
	}
	fmt.Fprintf(w, "Successors of %s in package %q:\n", in.Label(), p.Name)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHANNEL\tBUNDLE\tVERSION\tEDGES\tCHAIN\tCLASSIC\tV1")
	for _, s := range succ {
		chain := "-"
		switch {
		case s.ChainIndex == 0:
			chain = "head"
		case s.ChainIndex > 0:
			chain = fmt.Sprintf("head-%d", s.ChainIndex)
		}
		name := s.Node.Name
		if s.Node.Deprecated {
			name += " (deprecated)"
		}
		v1 := mark(s.V1)
		if s.Lower {
			v1 = "lower"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", s.Channel, name, orDash(s.Node.VersionString()), edgesText(s.Edges), chain, mark(s.Classic), v1)
	}
	return tw.Flush()
}

func mark(b bool) string {
	if b {
		return "picked"
	}
	return "-"
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// RunPath prints the upgrade path from --from. It exits 1 (after printing)
// when a path does not reach its target.
func RunPath(ctx context.Context, opts *Options) error {
	if err := cmdutil.CheckOutput(opts.Output, "text", "json"); err != nil {
		return err
	}
	sem, err := gr.ParseSemantics(opts.Semantics)
	if err != nil {
		return cmdutil.FlagErrorf("invalid --semantics: %v", err)
	}
	if opts.To != "" && opts.Version != "" {
		return cmdutil.FlagErrorf("--to and --version cannot be used together")
	}
	po := gr.PathOptions{Semantics: sem, Channels: opts.Channels}
	if opts.Version != "" {
		r, err := versionrange.Parse(opts.Version)
		if err != nil {
			return cmdutil.FlagErrorf("invalid --version: %v", err)
		}
		po.Range = r
	}
	p, in, err := loadFrom(ctx, opts)
	if err != nil {
		return err
	}
	if opts.To != "" {
		to, err := p.Resolve(opts.To)
		if err != nil {
			return err
		}
		if !to.HasVersion {
			return fmt.Errorf("--to %q: no bundle of package %q has that name, so its version is unknown", opts.To, p.Name)
		}
		v := to.Version
		po.To = &v
	}
	paths, err := p.Path(in, po)
	if err != nil {
		return err
	}
	if opts.Output == "json" {
		err = writePathsJSON(opts.IO.Out, paths)
	} else {
		err = writePathsText(opts.IO.Out, paths)
	}
	if err != nil {
		return err
	}
	for _, path := range paths {
		if !path.Reached {
			return cmdutil.SilentExit(cmdutil.ExitFailure)
		}
	}
	return nil
}

func writePathsJSON(w io.Writer, paths []*gr.Path) error {
	type step struct {
		From    versionJSON `json:"from"`
		To      versionJSON `json:"to"`
		Channel string      `json:"channel"`
		Edges   []edgeJSON  `json:"edges"`
	}
	type pathJSON struct {
		Package   string       `json:"package"`
		Semantics gr.Semantics `json:"semantics"`
		Channels  []string     `json:"channels"`
		From      versionJSON  `json:"from"`
		To        versionJSON  `json:"to"`
		Reached   bool         `json:"reached"`
		Reason    string       `json:"reason"`
		Steps     []step       `json:"steps"`
	}
	out := struct {
		Paths []pathJSON `json:"paths"`
	}{Paths: []pathJSON{}}
	for _, p := range paths {
		pj := pathJSON{Package: p.Package, Semantics: p.Semantics, Channels: p.Channels, From: installedJSON(p.From),
			To: nodeJSON(p.End()), Reached: p.Reached, Reason: p.Reason, Steps: []step{}}
		for _, s := range p.Steps {
			pj.Steps = append(pj.Steps, step{From: nodeJSON(s.From), To: nodeJSON(s.To), Channel: s.Channel, Edges: edgesJSON(s.Edges)})
		}
		out.Paths = append(out.Paths, pj)
	}
	return cmdutil.WriteJSON(w, out)
}

func writePathsText(w io.Writer, paths []*gr.Path) error {
	for i, p := range paths {
		if i > 0 {
			fmt.Fprintln(w)
		}
		what := "channel " + p.Channels[0]
		if p.Semantics == gr.V1 {
			what = "channels " + strings.Join(p.Channels, ", ")
		}
		fmt.Fprintf(w, "Package %q, %s, %s semantics, from %s:\n", p.Package, what, p.Semantics, p.From.Label())
		for j, s := range p.Steps {
			fmt.Fprintf(w, "  %d. %s -> %s  (%s", j+1, s.From.Label(), s.To.Label(), edgesText(s.Edges))
			if p.Semantics == gr.V1 && len(p.Channels) > 1 {
				fmt.Fprintf(w, "; channel %s", s.Channel)
			}
			fmt.Fprintln(w, ")")
		}
		if len(p.Steps) == 0 {
			fmt.Fprintln(w, "  no upgrade")
		}
		status := "Reached"
		if !p.Reached {
			status = "Not reached"
		}
		if _, err := fmt.Fprintf(w, "%s: %s\n", status, p.Reason); err != nil {
			return err
		}
	}
	return nil
}
