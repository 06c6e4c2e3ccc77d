package bundle

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	action "github.com/opmkit/opm/pkg/action/bundlevalidate"
	bv "github.com/opmkit/opm/pkg/bundlevalidate"
	"github.com/opmkit/opm/pkg/validate"
)

// NewAlphaValidateCmd builds upstream's `opm alpha bundle validate --tag
// IMAGE`, with its flags: the default validators and, with -o, the
// operatorhub and bundle-objects ones; errors only, as upstream.
func NewAlphaValidateCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var (
		tag, builder, optional string
	)
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Validate bundle image",
		Long: `Validate a bundle image (or directory): its format and content, as upstream's
"opm alpha bundle validate" does, without a container engine (-b is accepted
and unused).

Required validators: the CSV, the CRDs and the bundle format (manifests/,
metadata/, annotations.yaml, dependencies.yaml). Optional validators, with
-o: operatorhub (OperatorHub.io metadata; OPERATOR_BUNDLE_CATEGORIES names a
custom categories file) and bundle-objects (PodDisruptionBudgets,
PriorityClasses, RBAC on SecurityContextConstraints).

As upstream, only errors are reported; 'opm bundle validate' reports the
warnings too, with more validators and output formats.

Exit status: 0 valid, 1 invalid or not read, 2 usage.`,
		Example: `  opm alpha bundle validate --tag quay.io/test/test-operator:latest --image-builder none
  opm alpha bundle validate -t quay.io/test/test-operator:latest -o operatorhub,bundle-objects`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch builder {
			case "docker", "podman", "none":
			default:
				return cmdutil.FlagErrorf("unrecognized container-tool option: %s", builder)
			}
			var names []string
			for _, o := range strings.Split(optional, ",") {
				switch o = strings.TrimSpace(o); o {
				case "":
				case "operatorhub", "bundle-objects":
					names = append(names, o)
				default:
					return cmdutil.FlagErrorf("unknown optional validator %q: operatorhub or bundle-objects", o)
				}
			}
			opts := action.Options{Refs: []string{tag}, Positions: true,
				Validate: bv.Options{Values: map[string]string{}, CategoriesFile: os.Getenv("OPERATOR_BUNDLE_CATEGORIES")}}
			if len(names) > 0 {
				sel, err := bv.ParseSelector("name in (" + strings.Join(names, ",") + ")")
				if err != nil {
					return err
				}
				opts.Validate.Selector = sel
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			opts.Registry = reg
			res, err := action.Run(cmd.Context(), opts)
			if err != nil {
				return err
			}
			errsOnly := &validate.Result{Passed: res.Findings.Passed}
			for _, f := range res.Findings.Findings {
				if f.Severity == validate.SeverityError && f.Code != "operatorhub-deprecated" {
					errsOnly.Findings = append(errsOnly.Findings, f)
				}
			}
			if err := validate.WriteText(ios.ErrOut, errsOnly, true); err != nil {
				return err
			}
			if !res.Passed() {
				fmt.Fprintf(ios.ErrOut, "bundle %s: invalid: %s\n", tag, plural(len(errsOnly.Findings), "error"))
				return cmdutil.SilentExit(cmdutil.ExitFailure)
			}
			fmt.Fprintln(ios.ErrOut, "All validation tests have been completed successfully")
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&tag, "tag", "t", "", "The path of a registry to pull from, image name and its tag that present the bundle image (e.g. quay.io/test/test-operator:latest); a bundle directory also works")
	f.StringVarP(&builder, "image-builder", "b", "docker", "Tool used to pull and unpack bundle images. One of: [none, docker, podman] (accepted for compatibility: no engine is needed)")
	f.StringVarP(&optional, "optional-validators", "o", "", "Specifies optional validations to be run. One or more of: [operatorhub, bundle-objects]")
	_ = cmd.MarkFlagRequired("tag")
	return cmd
}
