package compose

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
)

// Prefer says which input wins when several hold the same package.
type Prefer string

// Merge policies.
const (
	// PreferNone: a package in several inputs is an error.
	PreferNone Prefer = ""
	// PreferFirst: the first input holding the package wins.
	PreferFirst Prefer = "first"
	// PreferLast: the last input holding the package wins.
	PreferLast Prefer = "last"
)

// ParsePrefer accepts "", "first" and "last".
func ParsePrefer(s string) (Prefer, error) {
	switch Prefer(s) {
	case PreferNone, PreferFirst, PreferLast:
		return Prefer(s), nil
	}
	return "", fmt.Errorf("unknown --prefer value %q, expected first or last", s)
}

// Input is one catalog to merge; Source names it in messages.
type Input struct {
	Source string
	Config *declcfg.DeclarativeConfig
}

// MergeOptions configure [Merge].
type MergeOptions struct {
	Prefer Prefer
	// SkipValidation returns the merged catalog without checking it.
	SkipValidation bool
}

// MergeResult is the merged catalog and the packages an input lost.
type MergeResult struct {
	Config *declcfg.DeclarativeConfig
	// Preferred are the packages several inputs held, each with the input
	// --prefer took it from, in package order.
	Preferred []Preferred
	// Packages is the number of packages in the result.
	Packages int
}

// Preferred is a package several inputs held: the input it was taken
// from, and the others.
type Preferred struct {
	Package string
	From    string
	Over    []string
	Prefer  Prefer
}

// maxNamed is how many packages a summary line of Notes names.
const maxNamed = 5

// Notes are the lines that tell what --prefer chose: one per winning
// input and set of losing inputs, naming a few packages and counting the
// rest; with all, one per package.
func (r *MergeResult) Notes(all bool) []string {
	var out []string
	if all {
		for _, p := range r.Preferred {
			out = append(out, fmt.Sprintf("package %q: taken from %s (--prefer %s), not from %s", p.Package, p.From, p.Prefer, strings.Join(p.Over, ", ")))
		}
		return out
	}
	type group struct {
		from, over string
		prefer     Prefer
		names      []string
	}
	var groups []*group
	byKey := map[string]*group{}
	for _, p := range r.Preferred {
		over := strings.Join(p.Over, ", ")
		key := p.From + "\x00" + over
		g := byKey[key]
		if g == nil {
			g = &group{from: p.From, over: over, prefer: p.Prefer}
			byKey[key] = g
			groups = append(groups, g)
		}
		g.names = append(g.names, p.Package)
	}
	for _, g := range groups {
		n := len(g.names)
		if n == 1 {
			out = append(out, fmt.Sprintf("package %q: taken from %s (--prefer %s), not from %s", g.names[0], g.from, g.prefer, g.over))
			continue
		}
		named := quoteNames(g.names[:min(n, maxNamed)])
		if n > maxNamed {
			named += fmt.Sprintf(" and %d more", n-maxNamed)
		}
		out = append(out, fmt.Sprintf("%d packages taken from %s (--prefer %s), not from %s: %s", n, g.from, g.prefer, g.over, named))
	}
	return out
}

func quoteNames(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = fmt.Sprintf("%q", n)
	}
	return strings.Join(q, ", ")
}

// ConflictError lists the packages that several inputs hold.
type ConflictError struct {
	Conflicts []Conflict
}

// Conflict is one package held by several inputs.
type Conflict struct {
	Package string
	// Sources are the inputs holding it, each with where its blobs start.
	Sources []string
}

func (e *ConflictError) Error() string {
	var sb strings.Builder
	if len(e.Conflicts) == 1 {
		c := e.Conflicts[0]
		fmt.Fprintf(&sb, "package %q is in more than one input: %s", c.Package, strings.Join(c.Sources, " and "))
		return sb.String()
	}
	fmt.Fprintf(&sb, "%d packages are in more than one input:", len(e.Conflicts))
	for _, c := range e.Conflicts {
		fmt.Fprintf(&sb, "\n  package %q: %s", c.Package, strings.Join(c.Sources, " and "))
	}
	return sb.String()
}

// Merge combines inputs into one catalog. A package (its olm.package blob
// and every channel, bundle, deprecation and other blob that names it) comes
// whole from one input: a package that several inputs hold is a
// *ConflictError naming all of them, unless opts.Prefer picks the first or
// the last. Blobs that belong to no package are kept from every input,
// once each when identical. Blobs keep their input order, so merging
// disjoint catalogs gives what rendering them together gives. The result
// is validated with upstream's rules unless opts.SkipValidation.
func Merge(inputs []Input, opts MergeOptions) (*MergeResult, error) {
	indexes := make([]map[string]*pkgBlobs, len(inputs))
	holders := map[string][]int{}
	for i, in := range inputs {
		indexes[i] = byPackage(in.Config)
		for _, name := range sortedNames(indexes[i]) {
			if name == "" {
				continue
			}
			holders[name] = append(holders[name], i)
		}
	}
	owner := map[string]int{}
	var conflicts []Conflict
	res := &MergeResult{}
	for _, name := range sortedNames(holders) {
		hs := holders[name]
		if len(hs) == 1 {
			owner[name] = hs[0]
			continue
		}
		var sources []string
		for _, i := range hs {
			sources = append(sources, describeSource(inputs[i].Source, indexes[i][name].firstPos(inputs[i].Config)))
		}
		switch opts.Prefer {
		case PreferFirst, PreferLast:
			win := hs[0]
			if opts.Prefer == PreferLast {
				win = hs[len(hs)-1]
			}
			owner[name] = win
			var lost []string
			for _, i := range hs {
				if i != win {
					lost = append(lost, inputs[i].Source)
				}
			}
			res.Preferred = append(res.Preferred, Preferred{Package: name, From: inputs[win].Source, Over: lost, Prefer: opts.Prefer})
		default:
			conflicts = append(conflicts, Conflict{Package: name, Sources: sources})
		}
	}
	if len(conflicts) > 0 {
		return nil, &ConflictError{Conflicts: conflicts}
	}

	out := &declcfg.DeclarativeConfig{}
	seenLoose := map[string]bool{}
	for i, in := range inputs {
		c := in.Config
		mine := func(pkg string) bool { o, ok := owner[pkg]; return ok && o == i }
		for _, p := range c.Packages {
			if mine(p.Name) {
				out.Packages = append(out.Packages, p)
			}
		}
		for _, ch := range c.Channels {
			if mine(ch.Package) {
				out.Channels = append(out.Channels, ch)
			}
		}
		for _, b := range c.Bundles {
			if mine(b.Package) {
				out.Bundles = append(out.Bundles, b)
			}
		}
		for _, d := range c.Deprecations {
			if mine(d.Package) {
				out.Deprecations = append(out.Deprecations, d)
			}
		}
		for _, o := range c.Others {
			if o.Package != "" {
				if mine(o.Package) {
					out.Others = append(out.Others, o)
				}
				continue
			}
			if key := string(bytes.TrimSpace(o.Blob)); !seenLoose[key] {
				seenLoose[key] = true
				out.Others = append(out.Others, o)
			}
		}
	}
	res.Config = out
	res.Packages = len(owner)
	if !opts.SkipValidation {
		if _, err := model.ConvertToModel(*out); err != nil {
			return nil, fmt.Errorf("the merged catalog is not valid: %w", err)
		}
	}
	return res, nil
}

func describeSource(source string, pos declcfg.Position) string {
	if !pos.IsValid() {
		return source
	}
	return fmt.Sprintf("%s (%s)", source, pos)
}
