package graph

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/opmkit/opm/pkg/action"
	gr "github.com/opmkit/opm/pkg/graph"
)

// InstalledOperator is one installed bundle a cluster upgrade check is
// about.
type InstalledOperator struct {
	Package string
	// From is the installed version or bundle name; Bundle the installed
	// bundle's name when the catalog no longer has it (see
	// [gr.PackageGraph.ResolveInstalled]).
	From, Bundle string
	// Channels to follow (empty: the package's default channel under
	// classic, every channel under v1).
	Channels []string
}

// ParseInstalled reads --installed values (PACKAGE=VERSION,
// PACKAGE=BUNDLE or PACKAGE=BUNDLE@VERSION) and --channel values
// (PACKAGE=CHANNEL, repeatable) into installed operators, in the order of
// installed. Malformed values are *action.UsageError.
func ParseInstalled(installed, channels []string) ([]InstalledOperator, error) {
	var out []InstalledOperator
	byPkg := map[string]bool{}
	for _, s := range installed {
		pkg, from, ok := strings.Cut(s, "=")
		pkg, from = strings.TrimSpace(pkg), strings.TrimSpace(from)
		if !ok || pkg == "" || from == "" {
			return nil, action.Usagef("invalid --installed %q: expected PACKAGE=VERSION, PACKAGE=BUNDLE or PACKAGE=BUNDLE@VERSION", s)
		}
		op := InstalledOperator{Package: pkg, From: from}
		if i := strings.LastIndex(from, "@"); i >= 0 {
			op.Bundle, op.From = from[:i], from[i+1:]
			if op.Bundle == "" || op.From == "" {
				return nil, action.Usagef("invalid --installed %q: expected PACKAGE=BUNDLE@VERSION", s)
			}
		}
		byPkg[pkg] = true
		out = append(out, op)
	}
	if len(out) == 0 {
		return nil, action.Usagef("name at least one installed bundle with --installed PACKAGE=VERSION")
	}
	for _, s := range channels {
		pkg, ch, ok := strings.Cut(s, "=")
		pkg, ch = strings.TrimSpace(pkg), strings.TrimSpace(ch)
		if !ok || pkg == "" || ch == "" {
			return nil, action.Usagef("invalid --channel %q: expected PACKAGE=CHANNEL", s)
		}
		if !byPkg[pkg] {
			return nil, action.Usagef("--channel %q names package %q, which no --installed names", s, pkg)
		}
		for i := range out {
			if out[i].Package == pkg {
				out[i].Channels = append(out[i].Channels, ch)
			}
		}
	}
	return out, nil
}

// UpgradeableOptions are the options of a cluster upgrade check.
type UpgradeableOptions struct {
	// Options.Refs and Options.Registry select the catalog; its Packages
	// and Channels are not used.
	Options
	// ClusterVersion is the cluster's OpenShift version (4.18.3,
	// 4.18.0-rc1, 4.18).
	ClusterVersion string
	// Installed are the installed bundles to check.
	Installed []InstalledOperator
	// Semantics is "classic" or "v1" ("" = classic).
	Semantics string
}

// UpgradeableResult is the answer for every installed bundle.
type UpgradeableResult struct {
	ClusterVersion string
	Next           gr.OpenShiftVersion
	Semantics      gr.Semantics
	Checks         []*gr.ClusterCheck
}

// Upgradeable checks whether the installed bundles let the cluster move to
// its next minor version, and how to unblock those that do not. A package
// the catalog lacks is an error; a bad cluster version, semantics or
// installed list is an *action.UsageError.
func Upgradeable(ctx context.Context, opts UpgradeableOptions) (*UpgradeableResult, error) {
	sem, next, err := upgradeableOptions(opts)
	if err != nil {
		return nil, err
	}
	_, g, err := load(ctx, opts.Options)
	if err != nil {
		return nil, err
	}
	return upgradeableIn(ctx, g, opts, sem, next)
}

// upgradeableOptions checks the semantics, the cluster version and the
// installed bundles.
func upgradeableOptions(opts UpgradeableOptions) (gr.Semantics, gr.OpenShiftVersion, error) {
	if opts.Semantics == "" {
		opts.Semantics = string(gr.Classic)
	}
	sem, err := gr.ParseSemantics(opts.Semantics)
	if err != nil {
		return "", gr.OpenShiftVersion{}, action.Usagef("invalid --semantics: %v", err)
	}
	next, err := gr.NextMinor(opts.ClusterVersion)
	if err != nil {
		return "", gr.OpenShiftVersion{}, action.Usagef("invalid --cluster-version: %v", err)
	}
	if len(opts.Installed) == 0 {
		return "", gr.OpenShiftVersion{}, action.Usagef("name at least one installed bundle with --installed PACKAGE=VERSION")
	}
	for _, op := range opts.Installed {
		if sem == gr.Classic && len(op.Channels) > 1 {
			return "", gr.OpenShiftVersion{}, action.Usagef("package %q: OLM classic follows one channel, got --channel %s", op.Package, strings.Join(op.Channels, ", "))
		}
	}
	return sem, next, nil
}

// UpgradeableIn is [Upgradeable] on a graph already built (by a caller that
// keeps the catalog loaded, such as `opm view`): the same checks, the same
// answers. opts.Refs and opts.Registry are not used.
func UpgradeableIn(ctx context.Context, g *gr.Graph, opts UpgradeableOptions) (*UpgradeableResult, error) {
	sem, next, err := upgradeableOptions(opts)
	if err != nil {
		return nil, err
	}
	return upgradeableIn(ctx, g, opts, sem, next)
}

func upgradeableIn(ctx context.Context, g *gr.Graph, opts UpgradeableOptions, sem gr.Semantics, next gr.OpenShiftVersion) (*UpgradeableResult, error) {
	res := &UpgradeableResult{ClusterVersion: opts.ClusterVersion, Next: next, Semantics: sem}
	for _, op := range opts.Installed {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		p := g.Package(op.Package)
		if p == nil {
			return nil, fmt.Errorf("--installed %s: %w", op.Package, g.UnknownPackage(op.Package))
		}
		in, err := p.ResolveInstalled(op.From, op.Bundle)
		if err != nil {
			return nil, fmt.Errorf("--installed %s: %w", op.Package, err)
		}
		chk, err := p.CheckClusterUpgrade(ctx, in, next, sem, op.Channels)
		if err != nil {
			return nil, fmt.Errorf("--installed %s: %w", op.Package, err)
		}
		res.Checks = append(res.Checks, chk)
	}
	return res, nil
}

// Upgradeable reports whether no installed bundle blocks the upgrade (or
// is unknown to the catalog).
func (r *UpgradeableResult) Upgradeable() bool {
	for _, c := range r.Checks {
		if c.Status != gr.ClusterOK {
			return false
		}
	}
	return true
}

// OperatorJSON is one installed bundle in the -o json form.
type OperatorJSON struct {
	Package   string        `json:"package"`
	Channels  []string      `json:"channels"`
	Installed InstalledJSON `json:"installed"`
	// MaxOpenShiftVersion is the installed bundle's olm.maxOpenShiftVersion
	// (omitted when it has none or is not in the catalog);
	// MaxOpenShiftVersionError says why it is malformed.
	MaxOpenShiftVersion      string           `json:"maxOpenShiftVersion,omitempty"`
	MaxOpenShiftVersionError string           `json:"maxOpenShiftVersionError,omitempty"`
	Status                   gr.ClusterStatus `json:"status"`
	Reason                   string           `json:"reason"`
	// Action is "none" (ok), "upgrade" (to Target, by Steps), "remove"
	// (nothing reachable unblocks) or "check" (the installed bundle is
	// unknown and nothing reachable is known to be fine).
	Action string `json:"action"`
	Advice string `json:"advice,omitempty"`
	// InOtherChannels is set when the installed bundle is an entry of
	// none of Channels but of these; ChannelNote says so.
	InOtherChannels []string      `json:"inOtherChannels,omitempty"`
	ChannelNote     string        `json:"channelNote,omitempty"`
	Target          *VersionJSON  `json:"target"`
	Steps           []StepJSON    `json:"steps"`
	Unreachable     []VersionJSON `json:"unreachable,omitempty"`
}

// UpgradeableJSON is the -o json form of a cluster upgrade check.
type UpgradeableJSON struct {
	ClusterVersion   string         `json:"clusterVersion"`
	NextMinorVersion string         `json:"nextMinorVersion"`
	Semantics        gr.Semantics   `json:"semantics"`
	Upgradeable      bool           `json:"upgradeable"`
	Operators        []OperatorJSON `json:"operators"`
}

func actionOf(c *gr.ClusterCheck) string {
	switch {
	case c.Status == gr.ClusterOK:
		return "none"
	case c.Target != nil:
		return "upgrade"
	case c.Remove:
		return "remove"
	}
	return "check"
}

// JSON returns the -o json form.
func (r *UpgradeableResult) JSON() UpgradeableJSON {
	out := UpgradeableJSON{ClusterVersion: r.ClusterVersion, NextMinorVersion: r.Next.String(), Semantics: r.Semantics,
		Upgradeable: r.Upgradeable(), Operators: []OperatorJSON{}}
	for _, c := range r.Checks {
		o := OperatorJSON{Package: c.Package, Channels: c.Channels, Installed: installedJSON(c.Installed), Status: c.Status,
			Reason: c.Reason, Action: actionOf(c), Advice: c.Advice, Steps: []StepJSON{},
			InOtherChannels: c.InOtherChannels, ChannelNote: c.ChannelNote}
		if c.Max != nil {
			o.MaxOpenShiftVersion = c.Max.String()
		}
		if c.MaxErr != nil {
			o.MaxOpenShiftVersionError = c.MaxErr.Error()
		}
		if c.Target != nil {
			t := nodeJSON(c.Target)
			o.Target = &t
			for _, s := range c.Path.Steps {
				o.Steps = append(o.Steps, StepJSON{From: nodeJSON(s.From), To: nodeJSON(s.To), Channel: s.Channel, Edges: edgesJSON(s.Edges), Note: s.Note})
			}
		}
		for _, n := range c.Unreachable {
			o.Unreachable = append(o.Unreachable, nodeJSON(n))
		}
		out.Operators = append(out.Operators, o)
	}
	return out
}

// WriteText writes one paragraph per installed bundle and a verdict.
func (r *UpgradeableResult) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "Cluster %s: next minor version %s, OLM %s semantics.\n", r.ClusterVersion, r.Next, r.Semantics)
	var bad []string
	for _, c := range r.Checks {
		chans := "channel " + c.Channels[0]
		if len(c.Channels) > 1 {
			chans = "channels " + strings.Join(c.Channels, ", ")
		}
		switch {
		case len(c.InOtherChannels) > 0 && len(c.Channels) > 1:
			chans += " (in none of them)"
		case len(c.InOtherChannels) > 0:
			chans += " (not in it)"
		}
		fmt.Fprintf(w, "\n%s: %s, %s: %s\n", c.Package, c.Installed.Label(), chans, c.Status)
		if c.Installed.Note != "" {
			fmt.Fprintf(w, "  Note: %s (write PACKAGE=BUNDLE@VERSION if it was named otherwise).\n", c.Installed.Note)
		}
		if c.ChannelNote != "" {
			if len(c.InOtherChannels) == 1 {
				fmt.Fprintf(w, "  Note: %s: give --channel %s=%s if the subscription follows it.\n", c.ChannelNote, c.Package, c.InOtherChannels[0])
			} else {
				fmt.Fprintf(w, "  Note: %s: give the channel the subscription follows with --channel %s=CHANNEL.\n", c.ChannelNote, c.Package)
			}
		}
		fmt.Fprintf(w, "  %s.\n", upperFirst(c.Reason))
		if c.Status == gr.ClusterOK {
			continue
		}
		bad = append(bad, fmt.Sprintf("%s (%s)", c.Package, c.Status))
		if c.Target != nil {
			for j, s := range c.Path.Steps {
				fmt.Fprintf(w, "  %d. %s -> %s  (%s", j+1, s.From.Label(), s.To.Label(), edgesText(s.Edges))
				if len(c.Channels) > 1 {
					fmt.Fprintf(w, "; channel %s", s.Channel)
				}
				if s.Note != "" {
					fmt.Fprintf(w, "; %s", s.Note)
				}
				fmt.Fprintln(w, ")")
			}
			fmt.Fprintf(w, "  %s.\n", c.Path.Reason)
		}
		if len(c.Unreachable) > 0 {
			var names []string
			for i, n := range c.Unreachable {
				if i == maxListed {
					names = append(names, fmt.Sprintf("and %d more (-o json lists them all)", len(c.Unreachable)-maxListed))
					break
				}
				names = append(names, n.Label())
			}
			fmt.Fprintf(w, "  Bundles that allow %s but are never reached: %s.\n", r.Next, strings.Join(names, ", "))
		}
		fmt.Fprintf(w, "  %s.\n", upperFirst(c.Advice))
	}
	var err error
	if len(bad) == 0 {
		_, err = fmt.Fprintf(w, "\nUpgradeable to %s: no installed bundle blocks it.\n", r.Next)
	} else {
		_, err = fmt.Fprintf(w, "\nNot upgradeable to %s: %s.\n", r.Next, strings.Join(bad, ", "))
	}
	return err
}

// maxListed bounds the bundles a text report lists in one sentence.
const maxListed = 5

func upperFirst(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-'a'+'A') + s[1:]
}
