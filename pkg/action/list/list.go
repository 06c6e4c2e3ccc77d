// Package list is the action of `opm alpha list`: the packages, channels
// and bundles of a catalog as upstream's tables (byte for byte) or as JSON
// rows.
//
// The catalog is rendered (FBC directories and catalog images only) and
// converted to a validated [model.Model], so an invalid catalog fails with
// the full validation text, as upstream.
package list

import (
	"context"
	// Registers sha256 for go-digest, which the model's image pull-spec
	// checks need ("unsupported digest algorithm" otherwise).
	_ "crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/model"
	"github.com/opmkit/opm/pkg/render"
)

// What selects the rows a list returns.
type What string

// The three lists.
const (
	WhatPackages What = "packages"
	WhatChannels What = "channels"
	WhatBundles  What = "bundles"
)

// Options are what `opm alpha list` is given.
type Options struct {
	What What
	// Ref is an FBC directory or a catalog image.
	Ref string
	// Package keeps the channels or bundles of one package ("" = all).
	Package string
	// Registry configures pulls of catalog images.
	Registry render.RegistryOptions
}

// Result holds the rows of one list; only the slice of Options.What is
// set.
type Result struct {
	What     What
	Packages []Package
	Channels []Channel
	Bundles  []Bundle
}

// Run loads opts.Ref and lists what opts.What names.
func Run(ctx context.Context, opts Options) (*Result, error) {
	switch opts.What {
	case WhatPackages, WhatChannels, WhatBundles:
	default:
		return nil, action.Usagef("unknown list %q, expected (packages|channels|bundles)", opts.What)
	}
	m, err := Load(ctx, opts.Ref, opts.Registry)
	if err != nil {
		return nil, err
	}
	res := &Result{What: opts.What}
	switch opts.What {
	case WhatPackages:
		res.Packages = Packages(m)
	case WhatChannels:
		res.Channels, err = Channels(m, opts.Package)
	case WhatBundles:
		res.Bundles, err = Bundles(m, opts.Package)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

// Rows returns the rows of the list (a slice), for JSON output.
func (r *Result) Rows() any {
	switch r.What {
	case WhatChannels:
		return r.Channels
	case WhatBundles:
		return r.Bundles
	}
	return r.Packages
}

// WriteTable writes upstream's table of the list.
func (r *Result) WriteTable(w io.Writer) error {
	switch r.What {
	case WhatChannels:
		return WriteChannels(w, r.Channels)
	case WhatBundles:
		return WriteBundles(w, r.Bundles)
	}
	return WritePackages(w, r.Packages)
}

// Load renders ref (an FBC directory or catalog image) and converts it to a
// validated model. Any other kind of reference gives upstream's
// `cannot list non-index "<ref>"`.
func Load(ctx context.Context, ref string, reg render.RegistryOptions) (model.Model, error) {
	cfg, err := render.Render(ctx, render.Options{
		Refs:           []string{ref},
		AllowedRefMask: render.RefDCImage | render.RefDCDir | render.RefSqliteImage | render.RefSqliteFile,
		Registry:       reg,
	})
	if err != nil {
		if errors.Is(err, render.ErrNotAllowed) {
			return nil, fmt.Errorf("cannot list non-index %q", ref)
		}
		return nil, err
	}
	return model.ConvertToModel(*cfg)
}

// Package is one row of `list packages`.
type Package struct {
	Name string `json:"name"`
	// DisplayName is spec.displayName of the CSV of the default channel's
	// head; empty when the head carries no olm.bundle.object data.
	DisplayName    string `json:"displayName"`
	DefaultChannel string `json:"defaultChannel"`
}

// Channel is one row of `list channels`.
type Channel struct {
	Package string `json:"package"`
	Name    string `json:"name"`
	// Head is the channel head; HeadError is set instead when the channel
	// has none or several.
	Head      string `json:"head"`
	HeadError string `json:"headError,omitempty"`
}

// Bundle is one row of `list bundles`: a bundle as a member of one channel.
type Bundle struct {
	Package   string   `json:"package"`
	Channel   string   `json:"channel"`
	Name      string   `json:"name"`
	Version   string   `json:"version"`
	Replaces  string   `json:"replaces"`
	Skips     []string `json:"skips"`
	SkipRange string   `json:"skipRange"`
	Image     string   `json:"image"`
}

// NotFoundError is returned when a package filter matches no package. Its
// message has the one shape of unknown names (internal/suggest), with the
// nearest of Known; upstream's is package "x" not found.
type NotFoundError struct {
	Package string
	Known   []string // the catalog's packages
}

func (e *NotFoundError) Error() string {
	return suggest.Unknown("package", e.Package, "", e.Known).Error()
}

// notFound is the error for pkg, unknown in m.
func notFound(m model.Model, pkg string) error {
	known := make([]string, 0, len(m))
	for name := range m {
		known = append(known, name)
	}
	return &NotFoundError{Package: pkg, Known: known}
}

// Packages returns the packages of m sorted by name.
func Packages(m model.Model) []Package {
	out := make([]Package, 0, len(m))
	for _, p := range m {
		row := Package{Name: p.Name}
		if p.DefaultChannel != nil {
			row.DefaultChannel = p.DefaultChannel.Name
			row.DisplayName = displayName(p.DefaultChannel)
		}
		out = append(out, row)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Channels returns the channels of m (only those of pkg when it is not
// empty) sorted by package, then name.
func Channels(m model.Model, pkg string) ([]Channel, error) {
	var out []Channel
	for _, p := range m {
		if pkg != "" && p.Name != pkg {
			continue
		}
		for _, c := range p.Channels {
			row := Channel{Package: p.Name, Name: c.Name}
			head, err := channelHead(c)
			if err != nil {
				row.HeadError = err.Error()
			} else {
				row.Head = head.Name
			}
			out = append(out, row)
		}
	}
	if pkg != "" && len(out) == 0 {
		return nil, notFound(m, pkg)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// Bundles returns one row per bundle and channel that lists it (only for
// pkg when it is not empty), sorted by package, channel, then bundle name.
func Bundles(m model.Model, pkg string) ([]Bundle, error) {
	var out []Bundle
	for _, p := range m {
		if pkg != "" && p.Name != pkg {
			continue
		}
		for _, c := range p.Channels {
			for _, b := range c.Bundles {
				out = append(out, Bundle{
					Package:   p.Name,
					Channel:   c.Name,
					Name:      b.Name,
					Version:   b.VersionString(),
					Replaces:  b.Replaces,
					Skips:     append([]string{}, b.Skips...),
					SkipRange: b.SkipRange,
					Image:     b.Image,
				})
			}
		}
	}
	if pkg != "" && len(out) == 0 {
		return nil, notFound(m, pkg)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Package != out[j].Package {
			return out[i].Package < out[j].Package
		}
		if out[i].Channel != out[j].Channel {
			return out[i].Channel < out[j].Channel
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// channelHead returns the head bundle of c, with upstream's errors.
func channelHead(c *model.Channel) (*model.Bundle, error) {
	g := graph.Channel{Name: c.Name, Entries: make([]graph.Entry, 0, len(c.Bundles))}
	if c.Package != nil {
		g.Package = c.Package.Name
	}
	// Map order does not matter: Head's result depends only on the set.
	for _, b := range c.Bundles {
		g.Entries = append(g.Entries, graph.Entry{Name: b.Name, Replaces: b.Replaces, Skips: b.Skips, SkipRange: b.SkipRange})
	}
	name, err := g.Head()
	if err != nil {
		return nil, err
	}
	return c.Bundles[name], nil
}

// displayName returns spec.displayName of the CSV of c's head, or "" when
// there is no head or no CSV (e.g. the bundle carries olm.csv.metadata).
func displayName(c *model.Channel) string {
	head, err := channelHead(c)
	if err != nil || head == nil {
		return ""
	}
	csv := head.CsvJSON
	if csv == "" {
		b := declcfg.Bundle{Properties: head.Properties}
		if err := b.LoadObjects(); err != nil {
			return ""
		}
		csv = b.CsvJSON
	}
	if csv == "" {
		return ""
	}
	var v struct {
		Spec struct {
			DisplayName string `json:"displayName"`
		} `json:"spec"`
	}
	if err := json.Unmarshal([]byte(csv), &v); err != nil {
		return ""
	}
	return v.Spec.DisplayName
}

// newTable returns upstream's tabwriter: minwidth 0, tabwidth 4, padding 2,
// padded with spaces.
func newTable(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
}

// WritePackages writes upstream's packages table.
func WritePackages(w io.Writer, rows []Package) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "NAME\tDISPLAY NAME\tDEFAULT CHANNEL\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Name, r.DisplayName, r.DefaultChannel)
	}
	return tw.Flush()
}

// WriteChannels writes upstream's channels table; a head error is printed
// in the HEAD cell as `ERROR: <msg>`.
func WriteChannels(w io.Writer, rows []Channel) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "PACKAGE\tCHANNEL\tHEAD\n")
	for _, r := range rows {
		head := r.Head
		if r.HeadError != "" {
			head = "ERROR: " + r.HeadError
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", r.Package, r.Name, head)
	}
	return tw.Flush()
}

// WriteBundles writes upstream's bundles table, skips joined by ",".
func WriteBundles(w io.Writer, rows []Bundle) error {
	tw := newTable(w)
	fmt.Fprintf(tw, "PACKAGE\tCHANNEL\tBUNDLE\tREPLACES\tSKIPS\tSKIP RANGE\tIMAGE\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Package, r.Channel, r.Name, r.Replaces, strings.Join(r.Skips, ","), r.SkipRange, r.Image)
	}
	return tw.Flush()
}
