// Package manifests is the action of `opm generate catalogsource` and
// `opm generate clustercatalog`: the YAML that deploys a catalog image, as
// an OLM v0 CatalogSource (operators.coreos.com/v1alpha1) or an OLM v1
// ClusterCatalog (olm.operatorframework.io/v1). Only fields those CRDs
// define are written; tests validate the output against their schemas.
package manifests

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/pkg/image"
)

// Options describe the manifests of one catalog image.
type Options struct {
	// Image is the catalog image reference (a registry image, by tag or
	// digest).
	Image string
	// Name is the object's name (default: the image repository's last path
	// element, made a DNS-1123 label).
	Name string
	// Namespace is the CatalogSource's namespace (default DefaultNamespace;
	// ClusterCatalogs have none).
	Namespace string
	// DisplayName and Publisher are the CatalogSource's, shown by consoles
	// (default display name: the name).
	DisplayName, Publisher string
	// Priority orders catalogs in resolution (higher first; nil: unset,
	// which both CRDs treat as 0).
	Priority *int32
	// SecurityContextConfig is the CatalogSource pod's security profile:
	// "restricted" (the default: the catalog images this toolkit builds
	// run as a non-root user) or "legacy".
	SecurityContextConfig string
	// ExtractContent makes OLM copy the catalog out of the image and serve
	// it with its own opm (grpcPodConfig.extractContent): CatalogDir (default
	// /configs) and CacheDir (the pre-built cache; "" for none).
	ExtractContent       bool
	CatalogDir, CacheDir string
	// MemoryTarget is grpcPodConfig.memoryTarget: the pod's memory request,
	// and GOMEMLIMIT for its server (a Kubernetes quantity, e.g. 50Mi; ""
	// leaves OLM's default request of 50Mi).
	MemoryTarget string
	// PollInterval is how often the image reference is polled for a new
	// digest (CatalogSource updateStrategy.registryPoll.interval;
	// ClusterCatalog pollIntervalMinutes, whole minutes); 0: never.
	PollInterval time.Duration
	// ImageTemplate sets the CatalogSource's olm.catalogImageTemplate
	// annotation: the image reference with {kube_major_version},
	// {kube_minor_version} and {kube_patch_version} in it, which OLM fills
	// in from the cluster's Kubernetes version to pick the image.
	ImageTemplate string
	// AvailabilityMode is the ClusterCatalog's (Available or Unavailable;
	// "" leaves the default, Available).
	AvailabilityMode string
}

// DefaultNamespace is the CatalogSource namespace when none is given: the
// one upstream OLM installs its global catalogs in (OpenShift's is
// openshift-marketplace).
const DefaultNamespace = "olm"

// UsageError reports options that cannot make a manifest.
type UsageError struct{ Err error }

func (e *UsageError) Error() string { return e.Err.Error() }
func (e *UsageError) Unwrap() error { return e.Err }

func usagef(format string, args ...any) error {
	return &UsageError{Err: fmt.Errorf(format, args...)}
}

// CatalogSource returns the CatalogSource YAML.
func CatalogSource(o Options) ([]byte, error) {
	ref, nm, err := imageAndName(o)
	if err != nil {
		return nil, err
	}
	ns := o.Namespace
	if ns == "" {
		ns = DefaultNamespace
	}
	if !dnsLabel.MatchString(ns) {
		return nil, usagef("invalid namespace %q: a namespace is a DNS-1123 label (lower-case letters, digits and '-', at most 63)", ns)
	}
	cs := catalogSource{
		APIVersion: "operators.coreos.com/v1alpha1",
		Kind:       "CatalogSource",
		Metadata:   objectMeta{Name: nm, Namespace: ns},
		Spec: catalogSourceSpec{
			SourceType:  "grpc",
			Image:       o.Image,
			DisplayName: o.DisplayName,
			Publisher:   o.Publisher,
			Priority:    o.Priority,
		},
	}
	if cs.Spec.DisplayName == "" {
		cs.Spec.DisplayName = nm
	}
	if o.ImageTemplate != "" {
		if err := checkTemplate(o.ImageTemplate); err != nil {
			return nil, err
		}
		cs.Metadata.Annotations = map[string]string{ImageTemplateAnnotation: o.ImageTemplate}
	}
	pod := grpcPodConfig{SecurityContextConfig: o.SecurityContextConfig, MemoryTarget: o.MemoryTarget}
	if pod.SecurityContextConfig == "" {
		pod.SecurityContextConfig = "restricted"
	}
	if pod.SecurityContextConfig != "restricted" && pod.SecurityContextConfig != "legacy" {
		return nil, usagef("invalid security context config %q: want restricted or legacy", o.SecurityContextConfig)
	}
	if o.MemoryTarget != "" && !quantity.MatchString(o.MemoryTarget) {
		return nil, usagef("invalid memory target %q: want a Kubernetes quantity, e.g. 50Mi", o.MemoryTarget)
	}
	if o.ExtractContent {
		pod.ExtractContent = &extractContent{CatalogDir: o.CatalogDir, CacheDir: o.CacheDir}
		if pod.ExtractContent.CatalogDir == "" {
			pod.ExtractContent.CatalogDir = "/configs"
		}
		for _, d := range []string{pod.ExtractContent.CatalogDir, pod.ExtractContent.CacheDir} {
			if d != "" && !strings.HasPrefix(d, "/") {
				return nil, usagef("invalid directory %q: extractContent's directories are absolute paths in the image", d)
			}
		}
	} else if o.CacheDir != "" || o.CatalogDir != "" {
		return nil, usagef("the catalog and cache directories are those OLM copies out of the image in extractContent mode: give --extract-content too")
	}
	cs.Spec.GRPCPodConfig = &pod
	if err := checkPoll(o, ref); err != nil {
		return nil, err
	}
	if o.PollInterval > 0 {
		cs.Spec.UpdateStrategy = &updateStrategy{RegistryPoll: &registryPoll{Interval: o.PollInterval.String()}}
	}
	return marshal(cs)
}

// ClusterCatalog returns the ClusterCatalog YAML.
func ClusterCatalog(o Options) ([]byte, error) {
	ref, nm, err := imageAndName(o)
	if err != nil {
		return nil, err
	}
	cc := clusterCatalog{
		APIVersion: "olm.operatorframework.io/v1",
		Kind:       "ClusterCatalog",
		Metadata:   objectMeta{Name: nm},
		Spec: clusterCatalogSpec{
			Source:           catalogSourceRef{Type: "Image", Image: &imageSource{Ref: o.Image}},
			Priority:         o.Priority,
			AvailabilityMode: o.AvailabilityMode,
		},
	}
	switch o.AvailabilityMode {
	case "", "Available", "Unavailable":
	default:
		return nil, usagef("invalid availability mode %q: want Available or Unavailable", o.AvailabilityMode)
	}
	if err := checkPoll(o, ref); err != nil {
		return nil, err
	}
	if o.PollInterval > 0 {
		if o.PollInterval%time.Minute != 0 {
			return nil, usagef("invalid poll interval %v: a ClusterCatalog polls every whole number of minutes", o.PollInterval)
		}
		m := int64(o.PollInterval / time.Minute)
		cc.Spec.Source.Image.PollIntervalMinutes = &m
	}
	return marshal(cc)
}

// checkPoll refuses a negative poll interval, and polling an image named
// by digest.
func checkPoll(o Options, ref name.Reference) error {
	if o.PollInterval < 0 {
		return usagef("invalid poll interval %v", o.PollInterval)
	}
	if _, ok := ref.(name.Digest); ok && o.PollInterval > 0 {
		return usagef("%s names the image by digest, which never changes: polling needs a tag", o.Image)
	}
	return nil
}

// ImageTemplateAnnotation is the CatalogSource annotation whose image
// reference template OLM fills in from the cluster's Kubernetes version.
const ImageTemplateAnnotation = "olm.catalogImageTemplate"

// templateVars are the placeholders OLM fills in.
var templateVars = []string{"{kube_major_version}", "{kube_minor_version}", "{kube_patch_version}"}

// checkTemplate requires an image reference with at least one of the
// placeholders and no other braces.
func checkTemplate(t string) error {
	rest := t
	found := false
	for _, v := range templateVars {
		if strings.Contains(rest, v) {
			found = true
			rest = strings.ReplaceAll(rest, v, "1")
		}
	}
	if strings.ContainsAny(rest, "{}") {
		return usagef("invalid image template %q: the placeholders are %s", t, strings.Join(templateVars, ", "))
	}
	if !found {
		return usagef("invalid image template %q: it has none of the placeholders %s", t, strings.Join(templateVars, ", "))
	}
	if _, err := name.ParseReference(rest, name.StrictValidation); err != nil {
		return usagef("invalid image template %q: filled in, it is not an image reference: %v", t, err)
	}
	return nil
}

var (
	dnsLabel = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$`)
	// quantity is the pattern the CRD gives memoryTarget.
	quantity = regexp.MustCompile(`^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$`)
)

// imageAndName parses o.Image and returns the object's name.
func imageAndName(o Options) (name.Reference, string, error) {
	ref, err := parseImage(o.Image)
	if err != nil {
		return nil, "", err
	}
	nm, err := objectName(o.Name, ref)
	return ref, nm, err
}

func parseImage(s string) (name.Reference, error) {
	if s == "" {
		return nil, usagef("no image: give the catalog image reference")
	}
	if what := localImage(s); what != "" {
		return nil, usagef("%q is %s on this machine, which no cluster can pull: push the catalog to a registry the cluster can reach and give that reference (opm build catalog DIR -t REGISTRY/REPO:TAG builds and pushes it; an image already built can be copied there, e.g. with skopeo copy or crane push)", s, what)
	}
	ref, err := name.ParseReference(s, name.StrictValidation)
	if err != nil {
		return nil, usagef("invalid image %q: want a registry image reference with a tag or digest (HOST/REPO:TAG or HOST/REPO@sha256:...): %v", s, err)
	}
	return ref, nil
}

// localImage says what s is when it names an image on this machine (an
// OCI layout or archive, a docker archive, a path), "" otherwise.
func localImage(s string) string {
	for _, t := range []struct{ prefix, what string }{
		{"oci:", "an OCI image layout"},
		{"oci-archive:", "an OCI archive"},
		{"docker-archive:", "a docker archive"},
	} {
		if strings.HasPrefix(s, t.prefix) {
			return t.what
		}
	}
	if image.IsPath(s) {
		return "a path"
	}
	return ""
}

// objectName checks name, or derives one from the image's repository.
func objectName(n string, ref name.Reference) (string, error) {
	if n != "" {
		if !dnsLabel.MatchString(n) {
			return "", usagef("invalid name %q: a DNS-1123 label (lower-case letters, digits and '-', at most 63)", n)
		}
		return n, nil
	}
	repo := ref.Context().RepositoryStr()
	if i := strings.LastIndexByte(repo, '/'); i >= 0 {
		repo = repo[i+1:]
	}
	var b strings.Builder
	for _, r := range strings.ToLower(repo) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else if b.Len() > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte('-')
		}
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > 63 {
		out = strings.TrimRight(out[:63], "-")
	}
	if out == "" {
		return "", errors.New("cannot derive a name from the image: give --name")
	}
	return out, nil
}

func marshal(v any) ([]byte, error) {
	out, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	return out, nil
}

type objectMeta struct {
	Name        string            `json:"name"`
	Namespace   string            `json:"namespace,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type catalogSource struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   objectMeta        `json:"metadata"`
	Spec       catalogSourceSpec `json:"spec"`
}

type catalogSourceSpec struct {
	SourceType     string          `json:"sourceType"`
	Image          string          `json:"image"`
	DisplayName    string          `json:"displayName,omitempty"`
	Publisher      string          `json:"publisher,omitempty"`
	Priority       *int32          `json:"priority,omitempty"`
	GRPCPodConfig  *grpcPodConfig  `json:"grpcPodConfig,omitempty"`
	UpdateStrategy *updateStrategy `json:"updateStrategy,omitempty"`
}

type grpcPodConfig struct {
	SecurityContextConfig string          `json:"securityContextConfig,omitempty"`
	ExtractContent        *extractContent `json:"extractContent,omitempty"`
	MemoryTarget          string          `json:"memoryTarget,omitempty"`
}

type extractContent struct {
	CatalogDir string `json:"catalogDir"`
	CacheDir   string `json:"cacheDir,omitempty"`
}

type updateStrategy struct {
	RegistryPoll *registryPoll `json:"registryPoll,omitempty"`
}

type registryPoll struct {
	Interval string `json:"interval,omitempty"`
}

type clusterCatalog struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Metadata   objectMeta         `json:"metadata"`
	Spec       clusterCatalogSpec `json:"spec"`
}

type clusterCatalogSpec struct {
	Source           catalogSourceRef `json:"source"`
	Priority         *int32           `json:"priority,omitempty"`
	AvailabilityMode string           `json:"availabilityMode,omitempty"`
}

type catalogSourceRef struct {
	Type  string       `json:"type"`
	Image *imageSource `json:"image,omitempty"`
}

type imageSource struct {
	Ref                 string `json:"ref"`
	PollIntervalMinutes *int64 `json:"pollIntervalMinutes,omitempty"`
}
