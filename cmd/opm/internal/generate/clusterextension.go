package generate

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/manifests"
)

// NewClusterExtensionCmd builds `opm generate clusterextension`.
func NewClusterExtensionCmd(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command {
	var o manifests.ClusterExtensionOptions
	cmd := &cobra.Command{
		Use:   "clusterextension PACKAGE",
		Short: "Print a ClusterExtension (OLM v1) that installs a package of a catalog",
		Long: `Print a ready-to-apply ClusterExtension (olm.operatorframework.io/v1) that
installs PACKAGE from the catalog (-C, default: the current directory; a
directory, a file or a catalog image).

The bundle it installs is the one OLM v1 resolves to: the highest version of
the --channel channels (default: all) within --version, deprecated bundles
last. That bundle is checked as OLM v1 checks it (see docs/olm-v1.md); if
OLM v1 would refuse it, nothing is printed and the reasons are, with the
newest bundle it installs to pin with --version.

For a bundle without the AllNamespaces install mode, the ClusterExtension
gets the watchNamespace config its install modes need: the install
namespace (OwnNamespace; the default when allowed) or --watch-namespace
(SingleNamespace). Such a config needs OLM v1's experimental CRDs and the
SingleOwnNamespaceInstallSupport feature gate; the verdicts assume the
default feature gates unless --olm-v1-feature-gates says otherwise.

What installing depends on (a certificate provider for webhooks, the
experimental CRD) is written to standard error.`,
		Example: `  opm generate clusterextension argocd-operator -C catalog --channel alpha > argocd.yaml
  opm generate clusterextension oadp-operator -C catalog -n openshift-adp \
    --olm-v1-feature-gates SingleOwnNamespaceInstallSupport=true | kubectl apply -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			cat, err := cmdutil.OneCatalog(c, "")
			if err != nil {
				return err
			}
			reg, err := g.Registry(ios)
			if err != nil {
				return err
			}
			o.Package, o.Catalog, o.Registry = args[0], cat.Refs[0], reg
			res, err := manifests.ClusterExtension(c.Context(), o)
			var ue *manifests.UsageError
			if errors.As(err, &ue) {
				return &cmdutil.FlagError{Err: err}
			}
			if err != nil {
				return cat.Explain(err)
			}
			for _, n := range res.Notes {
				fmt.Fprintln(ios.ErrOut, "note: "+n)
			}
			_, err = ios.Out.Write(res.YAML)
			return err
		},
	}
	cmdutil.AddCatalogFlag(cmd, nil, ".", "catalog to read (a directory, a file or a catalog image)")
	fl := cmd.Flags()
	fl.StringSliceVarP(&o.Channels, "channel", "c", nil, "channel the ClusterExtension follows (repeatable; default: all)")
	fl.StringVar(&o.Version, "version", "", `version range of the ClusterExtension (OLM v1's syntax: "1.2.3", ">=1.2.0, <2", "~1.2"; default: any)`)
	fl.StringVar(&o.Name, "name", "", "object name (default: the package name)")
	fl.StringVarP(&o.Namespace, "namespace", "n", "", "install namespace, which must exist (default: the package name)")
	fl.StringVar(&o.WatchNamespace, "watch-namespace", "", "namespace the operator watches, for bundles without AllNamespaces (default: the install namespace where allowed)")
	fl.StringSliceVar(&o.FeatureGates, "olm-v1-feature-gates", nil, "operator-controller feature gates to assume (Name=true|false[,...]; default: its release's defaults)")
	return cmd
}
