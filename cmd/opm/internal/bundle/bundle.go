// Package bundle implements `opm bundle validate` and upstream's `opm
// alpha bundle validate`: flags in, [bundlevalidate.Run] once, the
// findings out in the format asked for.
package bundle

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/internal/buildinfo"
	"github.com/opmkit/opm/internal/ocpversion"
	action "github.com/opmkit/opm/pkg/action/bundlevalidate"
	bv "github.com/opmkit/opm/pkg/bundlevalidate"
	"github.com/opmkit/opm/pkg/olmv1"
	"github.com/opmkit/opm/pkg/validate"
)

// Output formats of `opm bundle validate`: operator-sdk's two, and opm
// validate's.
const (
	outputText   = "text"
	outputAlpha1 = "json-alpha1"
)

var outputs = []string{outputText, outputAlpha1, "json", "github", "sarif"}

// NewCmd builds `opm bundle`, which only groups its subcommands.
func NewCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "bundle",
		Short: "Work with operator bundles",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newValidateCmd(ios, g))
	return cmd
}

// validateFlags are the flags of `opm bundle validate`.
type validateFlags struct {
	output         string
	imageBuilder   string
	selector       string
	listOptional   bool
	optionalValues map[string]string
	external       string
	ocpVersion     string
	baseline       string
	writeBaseline  string
	olmv1          bool
	featureGates   []string
}

func newValidateCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var fl validateFlags
	cmd := &cobra.Command{
		Use:   "validate REF...",
		Short: "Validate operator bundles as operator-sdk and the catalog pipelines do",
		Long: `Validate operator bundles: each REF is a bundle directory (manifests/ and
metadata/), a directory of bundles in the community layout
(operators/<package>/<version>/, searched ` + fmt.Sprint(action.MaxDepth) + ` levels deep, validated several at a
time), or a bundle image (a registry reference, oci:DIR, oci-archive:FILE,
docker-archive:FILE; no container engine is needed).

The default validators are operator-sdk's (bundle validate with no flags): the
bundle format (manifests/, metadata/, the annotations file and its keys, the
media type, dependencies.yaml), the CSV (names, alm-examples, install modes,
minKubeVersion, required fields, annotations), the CRDs (as the API server
accepts them), the bundle (owned CRDs, service accounts, size) and the other
objects (supported kinds, metadata). Optional validators are selected with
operator-sdk's label selector: --select-optional suite=operatorframework runs
operatorhubv2, capabilities, categories, alpha-deprecated-apis and
good-practices; name=operatorhub, name=multiarch and name=bundle-objects run the
others; --list-optional lists them. --optional-values k8s-version=1.xx (or
--ocp-version 4.xx) names the Kubernetes release the deprecated-API checks
target; their table covers every removal up to Kubernetes ` + bv.LatestRemoval() + `.

Without -o, findings are printed as file:line:column: severity: message
[rule]. -o json-alpha1 prints operator-sdk's result, message for message; -o
json, -o github and -o sarif print opm validate's forms. --olm-v1 also checks
each bundle against OLM v1's install rules (--olm-v1-feature-gates sets the
feature gates they assume). --write-baseline FILE
records today's findings and --baseline FILE reports only new ones.

Exit status: 0 valid (warnings allowed), 1 some bundle has an error or cannot
be read, 2 usage. See docs/bundle-validate.md for every rule.`,
		Example: `  opm bundle validate ./bundle
  opm bundle validate ./bundle -o json-alpha1 --select-optional suite=operatorframework --optional-values=k8s-version=1.30
  opm bundle validate operators/ --select-optional name=good-practices -o github
  opm bundle validate quay.io/acme/op-bundle:v1.0.0 --ocp-version 4.16`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if fl.listOptional {
				return bv.WriteOptionalList(ios.Out)
			}
			opts, err := fl.options(args)
			if err != nil {
				return err
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts.Registry = reg
			opts.Stderr = ios.ErrOut
			res, err := action.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			if fl.writeBaseline != "" {
				fmt.Fprintf(ios.ErrOut, "wrote %d findings to baseline %s\n", res.Written, fl.writeBaseline)
			}
			return write(ios, res, fl.output)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&fl.output, "output", "o", outputText, "result format: text, json-alpha1 (operator-sdk's), json, github or sarif (opm validate's)")
	f.StringVarP(&fl.imageBuilder, "image-builder", "b", "docker", "operator-sdk's tool to pull images (docker, podman or none): accepted for compatibility; images are pulled without an engine")
	f.StringVar(&fl.selector, "select-optional", "", "label selector of the optional validators to run (e.g. suite=operatorframework, name=multiarch); --list-optional lists them")
	f.BoolVar(&fl.listOptional, "list-optional", false, "list the optional validators and exit")
	f.StringToStringVar(&fl.optionalValues, "optional-values", map[string]string{}, "values for the validators: k8s-version=1.xx (the deprecated-API checks' target), container-tools=docker|podman|none")
	f.StringVar(&fl.external, "alpha-select-external", "", "external validators to run, a path list (/path/e1:/path/e2): each is run with the bundle directory and prints operator-framework/api's result JSON")
	f.StringVar(&fl.ocpVersion, "ocp-version", "", "OpenShift release (4.xx) whose Kubernetes version the deprecated-API checks target (sets k8s-version)")
	f.BoolVar(&fl.olmv1, "olm-v1", false, "also check each bundle against OLM v1's install rules (what a ClusterExtension refuses: errors; what it installs only given a config or a certificate provider, or relies on OLM classic for: warnings)")
	f.StringSliceVar(&fl.featureGates, "olm-v1-feature-gates", nil, "operator-controller feature gates the --olm-v1 verdicts assume (Name=true|false[,...]; default: its release's defaults)")
	f.StringVar(&fl.baseline, "baseline", "", "report only findings not recorded in this baseline file")
	f.StringVar(&fl.writeBaseline, "write-baseline", "", "record today's findings in this file (then accept them)")
	return cmd
}

// options checks the flags and builds the action's options.
func (fl *validateFlags) options(args []string) (action.Options, error) {
	var opts action.Options
	if len(args) == 0 {
		return opts, cmdutil.FlagErrorf("an image tag or directory is a required argument")
	}
	if err := cmdutil.CheckOutput(fl.output, outputs...); err != nil {
		return opts, err
	}
	switch fl.imageBuilder {
	case "docker", "podman", "none":
	default:
		return opts, cmdutil.FlagErrorf("unrecognized image-builder option: %s", fl.imageBuilder)
	}
	sel, err := bv.ParseSelector(fl.selector)
	if err != nil {
		return opts, cmdutil.FlagErrorf("%v", err)
	}
	if err := sel.CheckMatches(); err != nil {
		return opts, cmdutil.FlagErrorf("invalid command args: %v", err)
	}
	values := map[string]string{}
	for k, v := range fl.optionalValues {
		values[k] = v
	}
	if fl.ocpVersion != "" {
		k8s, err := kubeOf(fl.ocpVersion)
		if err != nil {
			return opts, cmdutil.FlagErrorf("--ocp-version: %v", err)
		}
		if v, ok := values[bv.K8sVersionKey]; ok && v != k8s {
			return opts, cmdutil.FlagErrorf("--ocp-version %s is Kubernetes %s, but --optional-values sets %s=%s", fl.ocpVersion, k8s, bv.K8sVersionKey, v)
		}
		values[bv.K8sVersionKey] = k8s
	}
	if fl.output == outputAlpha1 && (fl.baseline != "" || fl.writeBaseline != "") {
		return opts, cmdutil.FlagErrorf("--baseline and --write-baseline work with the text, json, github and sarif outputs, not json-alpha1")
	}
	if len(fl.featureGates) > 0 && !fl.olmv1 {
		return opts, cmdutil.FlagErrorf("--olm-v1-feature-gates needs --olm-v1")
	}
	var gates *olmv1.Gates
	if fl.olmv1 {
		g, err := olmv1.ParseGates(fl.featureGates)
		if err != nil {
			return opts, cmdutil.FlagErrorf("--olm-v1-feature-gates: %v", err)
		}
		gates = &g
	}
	opts = action.Options{
		Refs:          args,
		OLMv1:         gates,
		Validate:      bv.Options{Selector: sel, Values: values, CategoriesFile: os.Getenv("OPERATOR_BUNDLE_CATEGORIES")},
		Positions:     fl.output != outputAlpha1,
		Baseline:      fl.baseline,
		WriteBaseline: fl.writeBaseline,
	}
	if strings.TrimSpace(fl.external) != "" {
		opts.External = filepath.SplitList(fl.external)
	}
	return opts, nil
}

// kubeOf returns the Kubernetes version (1.xx) OpenShift ocp (4.xx) ships.
func kubeOf(ocp string) (string, error) {
	v, err := ocpversion.Parse(ocp)
	if err != nil {
		return "", err
	}
	k, ok := ocpversion.Kube(v)
	if !ok {
		return "", fmt.Errorf("the Kubernetes version of OpenShift %s is not known here (the newest known is %s): give it with --optional-values k8s-version=1.xx", v, ocpversion.Newest)
	}
	return k.String(), nil
}

// write prints the result in the output format and returns the exit
// status for it.
func write(ios *cmdutil.IOStreams, res *action.Result, output string) error {
	var err error
	switch output {
	case outputAlpha1:
		err = bv.WriteAlpha1(ios.Out, res.Reports)
	case outputText:
		if err = validate.WriteText(ios.Out, res.Findings, true); err == nil {
			err = summary(ios.ErrOut, res)
		}
	default:
		info := buildinfo.Get()
		err = validate.Write(ios.Out, res.Findings, output, validate.ToolInfo{Name: "opm", Version: info.Version, InformationURI: "https://github.com/opmkit/opm"})
	}
	if err != nil {
		return err
	}
	if !res.Passed() {
		return cmdutil.SilentExit(cmdutil.ExitFailure)
	}
	return nil
}

// summary writes one line: the verdict of one bundle, or the counts of
// several.
func summary(w io.Writer, res *action.Result) error {
	errs, warns := res.Findings.Counts()
	counts := plural(errs, "error") + ", " + plural(warns, "warning")
	if res.Findings.Baselined > 0 {
		counts += fmt.Sprintf(" (%d baselined)", res.Findings.Baselined)
	}
	var line string
	if len(res.Reports) == 1 {
		verdict := "valid"
		if !res.Passed() {
			verdict = "invalid"
		}
		line = fmt.Sprintf("bundle %s: %s: %s", res.Reports[0].Source, verdict, counts)
	} else {
		failed := map[string]bool{}
		for _, f := range res.Findings.Findings {
			if f.Severity == validate.SeverityError {
				failed[f.Bundle] = true
			}
		}
		line = fmt.Sprintf("%d bundles: %d invalid; %s", len(res.Reports), len(failed), counts)
	}
	_, err := fmt.Fprintln(w, line)
	return err
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}
