package generate

import (
	"errors"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/build"
	"github.com/opmkit/opm/pkg/action/manifests"
)

// manifestFlags are the flags both manifest commands take.
type manifestFlags struct {
	opts     manifests.Options
	priority int32
	poll     time.Duration
}

func (f *manifestFlags) bind(fs *pflag.FlagSet) {
	fs.StringVar(&f.opts.Name, "name", "", "Object name (default: the image repository's last path element)")
	fs.Int32Var(&f.priority, "priority", 0, "Priority among catalogs: higher is preferred in resolution (default: unset, which is 0)")
	fs.DurationVar(&f.poll, "poll-interval", 0, "Poll the image reference for a new digest this often, e.g. 30m (needs a tag; default: never)")
}

// resolve fills the options the flags do not bind directly.
func (f *manifestFlags) resolve(c *cobra.Command, image string) manifests.Options {
	o := f.opts
	o.Image = image
	o.PollInterval = f.poll
	if c.Flags().Changed("priority") {
		p := f.priority
		o.Priority = &p
	}
	return o
}

// printManifest prints the manifest gen makes of o.
func printManifest(ios *cmdutil.IOStreams, gen func(manifests.Options) ([]byte, error), o manifests.Options) error {
	out, err := gen(o)
	var ue *manifests.UsageError
	if errors.As(err, &ue) {
		return &cmdutil.FlagError{Err: err}
	}
	if err != nil {
		return err
	}
	_, err = ios.Out.Write(out)
	return err
}

// NewCatalogSourceCmd builds `opm generate catalogsource`.
func NewCatalogSourceCmd(ios *cmdutil.IOStreams) *cobra.Command {
	f := &manifestFlags{}
	cmd := &cobra.Command{
		Use:   "catalogsource IMAGE",
		Short: "Print a CatalogSource (OLM v0) that serves a catalog image",
		Long: `Print a ready-to-apply CatalogSource (operators.coreos.com/v1alpha1) for a
catalog image: OLM runs the image as a pod and resolves from it.

By default the pod runs the image's own server (its entrypoint, serving on
port 50051), under the restricted security profile (the images 'opm build
catalog' makes run as a non-root user). With --extract-content, OLM copies
the catalog (--catalog-dir, default /configs) and the pre-built cache
(--cache-dir, default /var/cache/opm, where 'opm build catalog' puts it; ""
for none) out of the image and serves them with its own opm: the form for
images with no server (FROM scratch).

--image-template sets the olm.catalogImageTemplate annotation: OLM replaces
{kube_major_version}, {kube_minor_version} and {kube_patch_version} with the
cluster's Kubernetes version to choose the image, so a cluster upgrade moves
it to the matching catalog.

IMAGE must be in a registry the cluster can pull from: an image on this
machine (oci:, oci-archive:, docker-archive:, a path) is refused; push it
first ('opm build catalog DIR -t REGISTRY/REPO:TAG' builds and pushes).`,
		Example: `  opm generate catalogsource quay.io/example/catalog:v1 -n openshift-marketplace \
    --display-name "Example Operators" --publisher Example --poll-interval 30m
  opm generate catalogsource quay.io/example/catalog:v1.30 \
    --image-template 'quay.io/example/catalog:v{kube_major_version}.{kube_minor_version}'
  opm generate catalogsource quay.io/example/scratch-catalog:v1 --extract-content | kubectl apply -f -`,
		Args: cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			o := f.resolve(c, args[0])
			if !o.ExtractContent && !c.Flags().Changed("cache-dir") {
				o.CacheDir = "" // the default is for --extract-content
			}
			return printManifest(ios, manifests.CatalogSource, o)
		},
	}
	fl := cmd.Flags()
	f.bind(fl)
	fl.StringVarP(&f.opts.Namespace, "namespace", "n", manifests.DefaultNamespace, "Namespace (openshift-marketplace on OpenShift, for a cluster-wide catalog)")
	fl.StringVar(&f.opts.DisplayName, "display-name", "", "Name shown by consoles (default: the object name)")
	fl.StringVar(&f.opts.Publisher, "publisher", "", "Publisher shown by consoles")
	fl.StringVar(&f.opts.SecurityContextConfig, "security-context-config", "restricted", "The pod's security profile: restricted or legacy")
	fl.StringVar(&f.opts.MemoryTarget, "memory-target", "", "The pod's memory request, also its server's GOMEMLIMIT (a quantity, e.g. 50Mi; default: OLM's 50Mi request, no limit)")
	fl.BoolVar(&f.opts.ExtractContent, "extract-content", false, "Copy the catalog out of the image and serve it with OLM's own opm")
	fl.StringVar(&f.opts.CatalogDir, "catalog-dir", "", "With --extract-content: the catalog's directory in the image (default /configs)")
	fl.StringVar(&f.opts.CacheDir, "cache-dir", build.CacheDir, `With --extract-content: the pre-built cache's directory in the image ("" for none)`)
	fl.StringVar(&f.opts.ImageTemplate, "image-template", "", "The olm.catalogImageTemplate annotation: the image with {kube_major_version}, {kube_minor_version}, {kube_patch_version}")
	return cmd
}

// NewClusterCatalogCmd builds `opm generate clustercatalog`.
func NewClusterCatalogCmd(ios *cmdutil.IOStreams) *cobra.Command {
	f := &manifestFlags{}
	cmd := &cobra.Command{
		Use:   "clustercatalog IMAGE",
		Short: "Print a ClusterCatalog (OLM v1) for a catalog image",
		Long: `Print a ready-to-apply ClusterCatalog (olm.operatorframework.io/v1) for a
catalog image: OLM v1's catalogd unpacks the image and serves its catalog
(it reads the directory the operators.operatorframework.io.index.configs.v1
label names; the image needs no server).

--poll-interval is a whole number of minutes; an image named by digest is
never polled.

IMAGE must be in a registry the cluster can pull from: an image on this
machine (oci:, oci-archive:, docker-archive:, a path) is refused; push it
first ('opm build catalog DIR -t REGISTRY/REPO:TAG' builds and pushes).`,
		Example: `  opm generate clustercatalog quay.io/example/catalog:v1 --poll-interval 15m --priority 10`,
		Args:    cobra.ExactArgs(1),
		RunE: func(c *cobra.Command, args []string) error {
			return printManifest(ios, manifests.ClusterCatalog, f.resolve(c, args[0]))
		},
	}
	fl := cmd.Flags()
	f.bind(fl)
	fl.StringVar(&f.opts.AvailabilityMode, "availability-mode", "", "Available or Unavailable (default: unset, which is Available)")
	return cmd
}
