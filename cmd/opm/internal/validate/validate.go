// Package validate implements `opm validate`: flags in, [validate.Run]
// once, the findings out in the format asked for.
package validate

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/internal/buildinfo"
	"github.com/opmkit/opm/pkg/action/validate"
	"github.com/opmkit/opm/pkg/crd"
	"github.com/opmkit/opm/pkg/resolve"
	pkgvalidate "github.com/opmkit/opm/pkg/validate"
)

// NewCmd builds `opm validate`.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		opts    validate.Options
		output  string
		verbose bool
		olm     string
	)
	cmd := &cobra.Command{
		Use:   "validate <directory|file|-|image>",
		Short: "Validate the declarative config JSON file(s) in a given directory",
		Long: `Validate a file-based catalog: every rule upstream opm enforces (same verdict,
same messages), opm's CUE schemas for every blob, and checks upstream lacks
(as warnings, errors under --strict).

The catalog is a directory (as upstream), a single file, - for standard
input (e.g. opm render ... | opm validate -), or a catalog image reference.
Standard input without any blob is an error: it is what a failed
command before the pipe leaves; run pipes under set -o pipefail.

Without -o, problems are written to standard error: upstream's error tree with
the file and line of each problem, then every other finding. -o json and
-o yaml print upstream's {passed, error: {message}} with a findings array
beside it; -o github prints GitHub Actions annotations; -o sarif a SARIF 2.1.0
log.

Warnings are summarised as one line per rule (its first finding and how
many there are); -v lists every one. Rule options: --ignore, --warn-as-error
and --strict, also read from .opm-validate.yaml in the catalog directory
(list it in .indexignore); --write-baseline FILE records today's findings and
--baseline FILE reports only new ones.

--policy NAME|FILE turns on the release gate: the checks release pipelines
make (Konflux, the community pipelines, Conforma), each with its severity
and allow-lists; presets konflux and community, or a policy file (YAML, as
.opm-validate.yaml with rules, ocpVersion and allow). --ocp-version 4.x
names the OpenShift version the catalog is built for (else the policy's,
else the image's com.redhat.fbc.openshift.version label or DIR.Dockerfile)
and turns on the rules about it. See docs/release-gate.md.

--check-bundles validates every bundle as 'opm bundle validate' does (the
bundle format aside: a catalog has no bundle files): those carrying their
manifests as olm.bundle.object properties and, with --pull-bundles, the
others from their images; --bundle-select-optional picks optional
validators. See docs/bundle-validate.md.

--check-cache builds the serve caches of a catalog image (or of a catalog
directory, --check-cache=CACHE_DIR) again from its catalog and compares:
a cache that does not hold what /configs shows is an error
(serve-cache-mismatch).

Exit status: 0 valid (warnings allowed unless --strict), 1 invalid or not
read, 2 usage. See docs/validate.md for every rule code.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if output != "" {
				if err := cmdutil.CheckOutput(output, pkgvalidate.Formats...); err != nil {
					return err
				}
			}
			if err := resolve.CheckBudget(opts.SolverBudget); err != nil {
				return cmdutil.FlagErrorf("--solver-budget: %v", err)
			}
			var err error
			if opts.OLM, err = crd.ParseOLM(olm); err != nil {
				return cmdutil.FlagErrorf("--olm: %v", err)
			}
			opts.CheckCRDUpgrades = opts.CheckCRDUpgrades || cmd.Flags().Changed("olm")
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts.Ref, opts.Stdin, opts.Registry = args[0], ios.In, reg
			res, err := validate.Run(cmd.Context(), opts)
			var oe *pkgvalidate.OptionError
			if errors.As(err, &oe) {
				return cmdutil.FlagErrorf("%v", oe)
			}
			if err != nil {
				return err
			}
			if opts.WriteBaseline != "" {
				fmt.Fprintf(ios.ErrOut, "wrote %d findings to baseline %s\n", res.Written, opts.WriteBaseline)
			}
			return write(ios, res.Result, output, verbose)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&output, "output", "o", "", "output format (text|json|yaml|github|sarif; default text)")
	f.BoolVarP(&verbose, "verbose", "v", false, "text output: list every warning (default: one line per rule)")
	f.BoolVar(&opts.Strict, "strict", false, "treat warnings as errors")
	f.StringSliceVar(&opts.WarnAsError, "warn-as-error", nil, "treat the warnings of these rules as errors (RULE or glob such as 'crd-*'[,...]; repeatable)")
	f.StringSliceVar(&opts.Ignore, "ignore", nil, "do not report these rules (RULE or glob[,...]; repeatable; not rules upstream enforces)")
	f.StringVar(&opts.Baseline, "baseline", "", "report only findings not recorded in this baseline file")
	f.StringVar(&opts.WriteBaseline, "write-baseline", "", "record today's findings in this file (then accept them)")
	f.BoolVar(&opts.NoConfig, "no-config", false, "do not read the catalog directory's "+pkgvalidate.ConfigFile)
	f.StringVar(&opts.SchemaDir, "schema-dir", "", "directory of extra CUE schemas (*.cue) for your own blob schemas")
	f.BoolVar(&opts.CheckDependencies, "check-dependencies", false, "resolve every channel head's dependencies as OLM classic does (a warning; an error under --strict)")
	f.StringArrayVar(&opts.With, "with", nil, "extra catalog dependencies may come from, for --check-dependencies (repeatable; implies it)")
	f.Int64Var(&opts.SolverBudget, "solver-budget", resolve.DefaultBudget, "most solver conflicts --check-dependencies spends before it gives up (a positive number, or -1 for no limit)")
	f.BoolVar(&opts.CheckCRDUpgrades, "check-crd-upgrades", false, "check the CRDs of every upgrade edge as OLM v1 and OLM classic do (warnings; errors under --strict)")
	f.BoolVar(&opts.PullBundles, "pull-bundles", false, "pull the images of bundles without olm.bundle.object properties to read their CRDs (implies --check-crd-upgrades) and, with --target olm-v1 or --check-bundles, their manifests")
	f.BoolVar(&opts.CheckBundles, "check-bundles", false, "validate every bundle as 'opm bundle validate' does (operator-sdk's default validators): those with olm.bundle.object properties, and with --pull-bundles the others' images")
	f.StringVar(&opts.BundleSelector, "bundle-select-optional", "", "with --check-bundles: optional bundle validators, as opm bundle validate --select-optional (suite=operatorframework, name=multiarch, ...)")
	f.StringToStringVar(&opts.BundleValues, "bundle-optional-values", nil, "with --check-bundles: the validators' values, as opm bundle validate --optional-values (k8s-version=1.xx)")
	f.StringVar(&opts.Target, "target", "", "also check for a target: olm-v1 (what OLM v1 installs and upgrades; implies --check-crd-upgrades)")
	f.StringSliceVar(&opts.FeatureGates, "olm-v1-feature-gates", nil, "operator-controller feature gates the OLM v1 verdicts assume (Name=true|false[,...]; default: its release's defaults)")
	f.StringVar(&opts.Policy, "policy", "", "release policy: konflux, community, or a policy file (turns the release gate's rules on; docs/release-gate.md)")
	f.StringVar(&opts.OCPVersion, "ocp-version", "", "the OpenShift version the catalog is built for, 4.x (turns on the release gate's rules about it)")
	f.StringVar(&opts.CheckCache, "check-cache", "", "check that the serve caches hold what the catalog does, by building them again: an image's (the directory its command serves from, or --check-cache=PATH in it), or a catalog directory's (--check-cache=CACHE_DIR)")
	f.Lookup("check-cache").NoOptDefVal = validate.CheckCacheImage
	f.StringVar(&olm, "olm", "both", "aim --check-crd-upgrades at one OLM (classic|v1|both): changes only the other refuses are not reported (implies --check-crd-upgrades)")
	return cmd
}

// write prints res in the output format and returns the exit status for
// it: text goes to stderr (nothing for a clean catalog), the other formats
// to stdout.
func write(ios *cmdutil.IOStreams, res *pkgvalidate.Result, output string, verbose bool) error {
	info := buildinfo.Get()
	tool := pkgvalidate.ToolInfo{Name: "opm", Version: info.Version, InformationURI: "https://github.com/opmkit/opm"}
	switch output {
	case "", "text":
		if len(res.Findings) > 0 || !res.Passed || res.OLMv1 != nil || res.Gate != nil {
			if err := pkgvalidate.WriteText(ios.ErrOut, res, verbose); err != nil {
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
