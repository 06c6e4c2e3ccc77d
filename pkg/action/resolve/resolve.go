// Package resolve is the action behind `opm resolve`: it loads catalogs
// (FBC directories or catalog images), reads the installed bundles and
// subscriptions from their command-line forms and runs OLM classic's
// dependency resolution (pkg/resolve) over them.
package resolve

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/opmkit/opm/pkg/action"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/resolve"
)

// Options are the inputs of a resolution, in their command-line forms.
type Options struct {
	// Catalogs are NAME=REF[:PRIORITY]: a name, an FBC directory or a
	// catalog image, and an optional integer priority (default 0).
	Catalogs []string
	// Installed are CATALOG/BUNDLE.
	Installed []string
	// Subscribe are PACKAGE[:CHANNEL][@STARTINGCSV].
	Subscribe []string
	// Registry configures image pulls.
	Registry render.RegistryOptions
	// SolverBudget bounds the solver's work, in conflicts (0:
	// resolve.DefaultBudget; negative: none).
	SolverBudget int64
}

// UsageError is a request that cannot be run as written: a malformed or
// missing option, a catalog name given twice or not given. A catalog that
// cannot be loaded, or that lacks an installed bundle, is a plain error:
// it is found by reading, not in the command line.
type UsageError = action.UsageError

func usagef(format string, args ...any) error { return action.Usagef(format, args...) }

// CatalogSpec is a parsed --catalog value.
type CatalogSpec struct {
	Name     string
	Ref      string
	Priority int
}

var (
	priorityRE    = regexp.MustCompile(`:(-?[0-9]+)$`)
	catalogNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// ParseCatalog parses NAME=REF[:PRIORITY]. A trailing ":" and integer is
// the priority, so an image whose tag is a number needs an explicit
// priority after it (c=quay.io/org/index:4:0).
func ParseCatalog(s string) (CatalogSpec, error) {
	name, ref, ok := strings.Cut(s, "=")
	if !ok {
		return CatalogSpec{}, fmt.Errorf("invalid --catalog %q: want NAME=DIR[:PRIORITY]", s)
	}
	if !catalogNameRE.MatchString(name) {
		return CatalogSpec{}, fmt.Errorf("invalid --catalog %q: the name must be letters, digits, '.', '_' or '-'", s)
	}
	spec := CatalogSpec{Name: name, Ref: ref}
	if m := priorityRE.FindStringSubmatchIndex(ref); m != nil {
		p, err := strconv.Atoi(ref[m[2]:m[3]])
		if err != nil {
			return CatalogSpec{}, fmt.Errorf("invalid --catalog %q: priority: %w", s, err)
		}
		spec.Ref, spec.Priority = ref[:m[0]], p
	}
	if spec.Ref == "" {
		return CatalogSpec{}, fmt.Errorf("invalid --catalog %q: no directory or image", s)
	}
	return spec, nil
}

// ParseSubscription parses PACKAGE[:CHANNEL][@STARTINGCSV].
func ParseSubscription(s string) (resolve.Subscription, error) {
	sub := resolve.Subscription{Name: s}
	rest := s
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		rest, sub.StartingCSV = rest[:i], rest[i+1:]
		if sub.StartingCSV == "" {
			return sub, fmt.Errorf("invalid --subscribe %q: empty starting bundle after @", s)
		}
	}
	var hasChannel bool
	sub.Package, sub.Channel, hasChannel = strings.Cut(rest, ":")
	switch {
	case sub.Package == "":
		return sub, fmt.Errorf("invalid --subscribe %q: want PACKAGE[:CHANNEL][@STARTINGCSV]", s)
	case hasChannel && sub.Channel == "":
		return sub, fmt.Errorf("invalid --subscribe %q: empty channel after the colon", s)
	}
	return sub, nil
}

// ParseInstalled parses CATALOG/BUNDLE.
func ParseInstalled(s string) (resolve.Installed, error) {
	c, b, ok := strings.Cut(s, "/")
	if !ok || c == "" || b == "" {
		return resolve.Installed{}, fmt.Errorf("invalid --installed %q: want CATALOG/BUNDLE", s)
	}
	return resolve.Installed{Catalog: c, Bundle: b}, nil
}

// Parse checks the options and returns the resolver's request and the
// catalogs to load.
func Parse(opts Options) ([]CatalogSpec, resolve.Request, error) {
	var req resolve.Request
	if len(opts.Catalogs) == 0 {
		return nil, req, usagef("at least one --catalog is required")
	}
	if len(opts.Subscribe) == 0 && len(opts.Installed) == 0 {
		return nil, req, usagef("nothing to resolve: give --subscribe (and --installed)")
	}
	var specs []CatalogSpec
	seen := map[string]bool{}
	for _, c := range opts.Catalogs {
		spec, err := ParseCatalog(c)
		if err != nil {
			return nil, req, &UsageError{Err: err}
		}
		if seen[spec.Name] {
			return nil, req, usagef("catalog %q is given twice", spec.Name)
		}
		seen[spec.Name] = true
		specs = append(specs, spec)
	}
	for _, s := range opts.Installed {
		in, err := ParseInstalled(s)
		if err != nil {
			return nil, req, &UsageError{Err: err}
		}
		if !seen[in.Catalog] {
			return nil, req, usagef("--installed %s: no --catalog named %q", s, in.Catalog)
		}
		req.Installed = append(req.Installed, in)
	}
	for _, s := range opts.Subscribe {
		sub, err := ParseSubscription(s)
		if err != nil {
			return nil, req, &UsageError{Err: err}
		}
		req.Subscriptions = append(req.Subscriptions, sub)
	}
	return specs, req, nil
}

// Load renders the catalogs, each through pkg/render (a directory or an
// image, as other commands take them).
func Load(ctx context.Context, specs []CatalogSpec, reg render.RegistryOptions) ([]resolve.Catalog, error) {
	cats := make([]resolve.Catalog, 0, len(specs))
	for _, s := range specs {
		cfg, err := render.Render(ctx, render.Options{
			Refs:           []string{s.Ref},
			AllowedRefMask: render.RefDCDir | render.RefDCFile | render.RefDCImage,
			Registry:       reg,
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("load catalog %s: %w", s.Name, err)
		}
		cats = append(cats, resolve.Catalog{Name: s.Name, Priority: s.Priority, Config: cfg})
	}
	return cats, nil
}

// Run loads the catalogs and resolves. Errors are *UsageError for
// requests that cannot run as written, or others (a catalog that cannot be
// loaded, an installed bundle it lacks, the context's); an unsatisfiable
// request is a Result with Resolvable false.
func Run(ctx context.Context, opts Options) (*resolve.Result, error) {
	specs, req, err := Parse(opts)
	if err != nil {
		return nil, err
	}
	cats, err := Load(ctx, specs, opts.Registry)
	if err != nil {
		return nil, err
	}
	req.Budget = opts.SolverBudget
	return resolve.Resolve(ctx, cats, req)
}
