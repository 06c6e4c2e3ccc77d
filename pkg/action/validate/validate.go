// Package validate is the action of `opm validate`: it loads what the
// command is given (a directory, a file, standard input or a catalog image)
// and checks it with pkg/validate. Loading images is this package's job, so
// that pkg/validate itself needs no registry code.
package validate

import (
	"context"
	"fmt"
	"io"
	"os"

	actionbv "github.com/opmkit/opm/pkg/action/bundlevalidate"
	serveaction "github.com/opmkit/opm/pkg/action/serve"
	"github.com/opmkit/opm/pkg/bundlevalidate"
	"github.com/opmkit/opm/pkg/crd"
	"github.com/opmkit/opm/pkg/crd/crdsource"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/olmv1"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/resolve"
	"github.com/opmkit/opm/pkg/validate"
)

// Options are what `opm validate` is given.
type Options struct {
	// Ref is a directory, a file, "-" (Stdin) or a catalog image.
	Ref string
	// Stdin is read when Ref is "-".
	Stdin io.Reader
	// Registry configures pulls of catalog images.
	Registry render.RegistryOptions
	// Strict turns warnings into errors.
	Strict bool
	// SchemaDir holds extra CUE schemas ("" = none).
	SchemaDir string
	// Target, when TargetOLMv1, also checks what OLM v1 installs and
	// upgrades (pkg/olmv1), with the CRD upgrade checks.
	Target string
	// FeatureGates set operator-controller's feature gates for the OLM v1
	// checks (Name=true,Name=false; default: olmv1.Release's defaults).
	FeatureGates []string
	// CheckDependencies resolves every channel head's dependencies as OLM
	// classic would (pkg/validate CheckDependencies).
	CheckDependencies bool
	// With are extra catalogs (directories, files or images) dependencies
	// may come from; giving any turns CheckDependencies on.
	With []string
	// SolverBudget bounds the dependency check's solver work, in
	// conflicts (0: resolve.DefaultBudget; negative: none).
	SolverBudget int64
	// WarnAsError turns the warnings of these rules into errors.
	WarnAsError []string
	// Ignore drops the findings of these rules (not of rules upstream
	// enforces).
	Ignore []string
	// Baseline is a baseline file: its findings are not reported.
	Baseline string
	// WriteBaseline, when set, is where today's findings are recorded
	// (atomically; see validate.Baseline). They are then accepted, as
	// with Baseline.
	WriteBaseline string
	// NoConfig skips the catalog directory's validate.ConfigFile.
	NoConfig bool
	// OLM aims the CRD upgrade checks at one OLM (crd.ParseOLM; 0:
	// both).
	OLM crd.Refusal
	// CheckCRDUpgrades checks the CRDs of every upgrade edge (pkg/crd)
	// of the bundles that carry olm.bundle.object properties.
	CheckCRDUpgrades bool
	// PullBundles also pulls the images of bundles without them (catalogs
	// with olm.csv.metadata) to read their CRDs; it implies
	// CheckCRDUpgrades.
	PullBundles bool
	// CheckBundles validates every bundle as `opm bundle validate` does
	// (pkg/bundlevalidate's default validators, and the optional ones
	// BundleSelector selects): those carrying olm.bundle.object
	// properties, and with PullBundles the others from their images.
	CheckBundles bool
	// BundleSelector selects optional bundle validators, in operator-sdk's
	// --select-optional form (suite=operatorframework, name=multiarch).
	BundleSelector string
	// BundleValues are the validators' values, operator-sdk's
	// --optional-values (k8s-version=1.xx).
	BundleValues map[string]string
	// Policy is a release policy: a preset (konflux, community) or a
	// file; it replaces the one the catalog's configuration names.
	Policy string
	// OCPVersion is the OpenShift version the catalog is built for (the
	// release gate's target); it overrides the policy's and the labels'.
	OCPVersion string
	// CheckCache checks the serve caches against the catalog (see
	// checkCache): CheckCacheImage for the cache directory a catalog
	// image's command serves from, else a cache directory (for a catalog
	// directory; for an image, a path in it). "" checks nothing.
	CheckCache string
}

// CheckCacheImage is the CheckCache value that checks the cache directory
// a catalog image's command names.
const CheckCacheImage = "image"

// Result is what Run found, and what it did with the options.
type Result struct {
	*validate.Result
	// Config is the configuration file applied ("" when none).
	Config string
	// Written is the number of findings recorded in WriteBaseline.
	Written int
}

// Run validates opts.Ref. An invalid catalog, including one whose files do
// not parse, is a Result that did not pass, never an error. The error is
// for what kept it from validating anything: a path that does not exist or
// cannot be read, an unreachable image, standard input without blobs
// ([ErrNoBlobs]), schemas that do not build.
//
// A catalog directory is validated one package at a time from an index of
// its files (see declcfg.Index), so that memory follows the largest
// package rather than the catalog, and findings are placed at their
// elements. Rule options come from the policy (Policy, or the one the
// configuration names), the directory's validate.ConfigFile (unless
// NoConfig) and the command line, each overriding the previous.
func Run(ctx context.Context, opts Options) (*Result, error) {
	out := &Result{}
	vopts := validate.Options{}
	var baseline *validate.Baseline
	if opts.Baseline != "" {
		b, err := validate.ReadBaselineFile(opts.Baseline)
		if err != nil {
			return nil, err
		}
		baseline = b
	}
	var cfg *validate.Config
	if !opts.NoConfig {
		c, b, err := readConfig(opts.Ref)
		if err != nil {
			return nil, err
		}
		if c != nil {
			cfg = c
			out.Config = validate.ConfigFile
			if baseline == nil {
				baseline = b
			}
		}
	}
	// Both sets of rules are checked before anything is loaded.
	if err := validate.CheckRules("--warn-as-error", opts.WarnAsError); err != nil {
		return nil, err
	}
	if err := validate.CheckRules("--ignore", opts.Ignore); err != nil {
		return nil, err
	}
	policy, err := resolvePolicy(opts, cfg)
	if err != nil {
		return nil, err
	}
	vopts.Strict, vopts.StrictRules, vopts.Ignore = policy.RuleOptions()
	if vopts.Gate, err = gateOptions(ctx, opts, policy); err != nil {
		return nil, err
	}
	vopts.Schemas, err = validate.LoadSchemas(opts.SchemaDir)
	if err != nil {
		return nil, err
	}
	if opts.CheckDependencies || len(opts.With) > 0 {
		if vopts.Dependencies, err = loadDependencyCatalogs(ctx, opts.With, opts.Registry); err != nil {
			return nil, err
		}
		vopts.Dependencies.Budget = opts.SolverBudget
	}
	switch opts.Target {
	case "":
		if len(opts.FeatureGates) > 0 {
			return nil, &validate.OptionError{Msg: "--olm-v1-feature-gates: only with --target " + TargetOLMv1}
		}
	case TargetOLMv1:
		gates, err := olmv1.ParseGates(opts.FeatureGates)
		if err != nil {
			return nil, &validate.OptionError{Msg: "--olm-v1-feature-gates: " + err.Error()}
		}
		vopts.OLMv1 = &validate.OLMv1Options{Gates: gates}
		if opts.PullBundles {
			p := &manifestPuller{reg: opts.Registry, progress: opts.Registry.Progress}
			vopts.OLMv1.Pull = p.bundles
		}
	default:
		return nil, &validate.OptionError{Msg: fmt.Sprintf("--target %q: the only target is %s", opts.Target, TargetOLMv1)}
	}
	if vopts.Bundles, err = bundleOptions(opts); err != nil {
		return nil, err
	}
	if vopts.Bundles != nil && vopts.Bundles.Validate.Selector.Selects("multiarch") {
		session := image.NewSession(opts.Registry.ImageOptions()...)
		defer session.Close()
		vopts.Bundles.Validate.Inspect = actionbv.Inspector(session)
	}
	if opts.CheckCRDUpgrades || opts.PullBundles || opts.Target == TargetOLMv1 {
		vopts.CRDUpgrades = &validate.CRDUpgradeOptions{OLM: opts.OLM}
		if opts.PullBundles {
			p := &crdsource.Puller{Registry: opts.Registry, Progress: opts.Registry.Progress}
			vopts.CRDUpgrades.Pull = p.Bundles
		}
	}
	if opts.CheckCache != "" {
		if vopts.Extra, err = checkCache(ctx, opts); err != nil {
			return nil, err
		}
	}
	res, err := validateInput(ctx, opts, vopts)
	if err != nil {
		return nil, err
	}
	out.Result = res
	if opts.WriteBaseline != "" {
		b := res.Baseline()
		if err := b.WriteFile(opts.WriteBaseline); err != nil {
			return nil, err
		}
		out.Written = b.Len()
		res.ApplyBaseline(b)
	}
	if baseline != nil {
		res.ApplyBaseline(baseline)
	}
	return out, nil
}

// validateInput loads and validates opts.Ref.
func validateInput(ctx context.Context, opts Options, vopts validate.Options) (*validate.Result, error) {
	ix, cfg, err := openInput(ctx, opts.Ref, opts.Stdin, opts.Registry)
	if err != nil {
		if IsContentError(err) {
			res := validate.LoadErrorResult(err)
			configNotIgnored(res)
			bundleDirHelp(res, opts.Ref)
			return res, nil
		}
		return nil, err
	}
	if st, err := os.Stat(opts.Ref); err == nil && st.IsDir() && ix != nil {
		fs, err := directoryChecks(ctx, opts.Ref, ix, vopts.Gate)
		if err != nil {
			ix.Close()
			return nil, err
		}
		vopts.Extra = append(vopts.Extra, fs...)
	} else {
		vopts.Extra = append(vopts.Extra, validate.DirectoriesNotChecked(vopts.Gate)...)
	}
	if ix == nil {
		return validate.Validate(ctx, cfg, vopts)
	}
	defer ix.Close()
	return validate.ValidateIndex(ctx, ix, vopts)
}

// loadDependencyCatalogs loads the --with catalogs (directories, files or
// images, as LoadInput takes them), each named after its reference.
func loadDependencyCatalogs(ctx context.Context, refs []string, reg render.RegistryOptions) (*validate.DependencyOptions, error) {
	opts := &validate.DependencyOptions{}
	seen := map[string]bool{validate.ValidatedCatalog: true}
	for _, ref := range refs {
		if seen[ref] {
			return nil, fmt.Errorf("--with %s: given twice (or named %q)", ref, validate.ValidatedCatalog)
		}
		seen[ref] = true
		cfg, err := LoadInput(ctx, ref, nil, reg)
		if err != nil {
			return nil, fmt.Errorf("load --with catalog %s: %w", ref, err)
		}
		opts.With = append(opts.With, resolve.Catalog{Name: ref, Config: cfg})
	}
	return opts, nil
}

// checkCache checks the serve caches of opts.Ref against its catalog
// (serveaction.CheckCache): those of a catalog image (the directory its
// command serves from, or the path given), or the cache directory given
// for a catalog directory. What it finds are findings of the rules
// serve-cache-mismatch (errors) and serve-cache-not-checked.
func checkCache(ctx context.Context, opts Options) ([]validate.Finding, error) {
	var found []serveaction.CacheFinding
	st, err := os.Stat(opts.Ref)
	switch {
	case opts.Ref == "-" || (err == nil && !st.IsDir()):
		return nil, &validate.OptionError{Msg: "--check-cache: checks a catalog image, or a catalog directory with --check-cache=CACHE_DIR; not a file or standard input"}
	case err == nil:
		if opts.CheckCache == CheckCacheImage {
			return nil, &validate.OptionError{Msg: "--check-cache: a catalog directory has no image command naming its cache: give the cache directory, --check-cache=CACHE_DIR"}
		}
		found, err = serveaction.CheckCache(ctx, serveaction.CheckCacheOptions{Catalog: opts.Ref, CacheDir: opts.CheckCache})
	default:
		dir := opts.CheckCache
		if dir == CheckCacheImage {
			dir = ""
		}
		found, err = serveaction.CheckImageCache(ctx, opts.Ref, dir, opts.Registry, "")
	}
	if err != nil {
		return nil, fmt.Errorf("--check-cache: %w", err)
	}
	out := make([]validate.Finding, 0, len(found))
	for _, f := range found {
		if f.NotChecked {
			out = append(out, validate.Finding{Severity: validate.SeverityWarning, Code: validate.CodeServeCacheNotChecked, Message: f.Message})
			continue
		}
		out = append(out, validate.Finding{Severity: validate.SeverityError, Code: validate.CodeServeCacheMismatch, Message: f.Message,
			Help: "a serve cache must be built from the catalog it is shipped with, or the server answers with another catalog than the one reviewers see: build the image again from its catalog (opm build catalog), or the cache (opm serve CATALOG --cache-dir DIR --cache-only)"})
	}
	return out, nil
}

// bundleOptions turns --check-bundles and its flags into the bundle
// validation options (nil without --check-bundles).
func bundleOptions(opts Options) (*validate.BundleOptions, error) {
	if !opts.CheckBundles {
		if opts.BundleSelector != "" || len(opts.BundleValues) > 0 {
			return nil, &validate.OptionError{Msg: "--bundle-select-optional and --bundle-optional-values: only with --check-bundles"}
		}
		return nil, nil
	}
	sel, err := bundlevalidate.ParseSelector(opts.BundleSelector)
	if err == nil {
		err = sel.CheckMatches()
	}
	if err != nil {
		return nil, &validate.OptionError{Msg: "--bundle-select-optional: " + err.Error()}
	}
	values := map[string]string{}
	for k, v := range opts.BundleValues {
		values[k] = v
	}
	bo := &validate.BundleOptions{Validate: bundlevalidate.Options{Selector: sel, Values: values, CategoriesFile: os.Getenv("OPERATOR_BUNDLE_CATEGORIES")}}
	if opts.PullBundles {
		p := &manifestPuller{reg: opts.Registry, progress: opts.Registry.Progress}
		bo.Pull = p.manifestBundles
	}
	return bo, nil
}
