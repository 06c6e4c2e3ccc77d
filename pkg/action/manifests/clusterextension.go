package manifests

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"regexp"
	"slices"
	"strings"

	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/graph"
	"github.com/opmkit/opm/pkg/olmv1"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/versionrange"
)

// ClusterExtensionOptions describe the ClusterExtension of one package.
type ClusterExtensionOptions struct {
	// Catalog is the catalog the package comes from: a directory, a file
	// or a catalog image.
	Catalog  string
	Registry render.RegistryOptions
	// Package, Channels and Version are the ClusterExtension's source:
	// the package, the channels it follows (empty: all) and its version
	// range (empty: any).
	Package  string
	Channels []string
	Version  string
	// Name is the object's name (default: the package name).
	Name string
	// Namespace is the install namespace (default: the package name).
	Namespace string
	// WatchNamespace is the namespace the operator watches, for bundles
	// without AllNamespaces (default, for bundles that support
	// OwnNamespace: the install namespace).
	WatchNamespace string
	// FeatureGates are operator-controller's feature gates, in its
	// --feature-gates form (default: olmv1.Release's defaults).
	FeatureGates []string
}

// ClusterExtensionResult is the ClusterExtension and what it installs.
type ClusterExtensionResult struct {
	// YAML is the ClusterExtension.
	YAML []byte
	// Bundle is the bundle OLM v1 installs for it, and Verdict OLM v1's
	// verdict on it.
	Bundle  *graph.Node
	Verdict *olmv1.Verdict
	// Notes are what a person applying it should know (conditions,
	// warnings), one sentence each.
	Notes []string
}

// ClusterExtension returns the ClusterExtension (olm.operatorframework.io/v1)
// that installs o.Package from o.Catalog, with the watchNamespace config
// the bundle it resolves to needs. It refuses (an error) when OLM v1 would
// refuse that bundle, listing the reasons.
func ClusterExtension(ctx context.Context, o ClusterExtensionOptions) (*ClusterExtensionResult, error) {
	gates, err := olmv1.ParseGates(o.FeatureGates)
	if err != nil {
		return nil, &UsageError{Err: err}
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	var version *versionrange.Range
	if o.Version != "" {
		if version, err = versionrange.Parse(o.Version); err != nil {
			return nil, &UsageError{Err: err}
		}
	}
	cfg, err := loadPackage(ctx, o.Catalog, o.Package, o.Registry)
	if err != nil {
		return nil, err
	}
	g, err := graph.New(cfg)
	if err != nil {
		return nil, err
	}
	p := g.Package(o.Package)
	if p == nil {
		return nil, g.UnknownPackage(o.Package)
	}
	n, err := olmv1.Resolve(p, o.Channels, version)
	if err != nil {
		return nil, err
	}
	var b *declcfg.Bundle
	for i := range cfg.Bundles {
		if cfg.Bundles[i].Name == n.Name {
			b = &cfg.Bundles[i]
			break
		}
	}
	ob, _ := olmv1.FromDeclcfg(b)
	v := olmv1.Check(ob, gates)
	res := &ClusterExtensionResult{Bundle: n, Verdict: v}
	if !v.Installable {
		var reasons []string
		for _, is := range v.Issues {
			if is.Level() == olmv1.Refused {
				reasons = append(reasons, is.Message+" ["+is.Code+"]")
			}
		}
		return nil, fmt.Errorf("OLM v1 refuses %s, the bundle this ClusterExtension would install:\n  %s%s",
			n.Label(), strings.Join(reasons, "\n  "), pinHint(p, cfg, gates, o.Channels, n))
	}
	if !v.Modes {
		return nil, fmt.Errorf("the install modes of %s are unknown: the catalog holds neither its manifests (olm.bundle.object) nor olm.csv.metadata, so no valid watchNamespace config can be chosen", n.Label())
	}
	watch, err := o.watchNamespace(v.Watch)
	if err != nil {
		return nil, err
	}
	res.YAML, err = marshal(o.object(watch))
	if err != nil {
		return nil, err
	}
	res.Notes = notes(n, v, watch)
	return res, nil
}

// dnsSubdomain is the pattern of the CRD's names (packageName, channels,
// the object's name).
var dnsSubdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// check applies the ClusterExtension CRD's validation rules (its CEL rules
// and bounds) to the options, and sets the defaults.
func (o *ClusterExtensionOptions) check() error {
	if o.Package == "" {
		return usagef("no package: give the package to install")
	}
	if len(o.Package) > 253 || !dnsSubdomain.MatchString(o.Package) {
		return usagef("package %q cannot be a ClusterExtension's packageName: a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253)", o.Package)
	}
	if len(o.Channels) > 256 {
		return usagef("%d channels: a ClusterExtension follows at most 256", len(o.Channels))
	}
	for _, c := range o.Channels {
		if len(c) > 253 || !dnsSubdomain.MatchString(c) {
			return usagef("channel %q cannot be in a ClusterExtension's channels: a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253)", c)
		}
	}
	if len(o.Version) > 64 {
		return usagef("version range %q is longer than a ClusterExtension's 64 characters", o.Version)
	}
	if o.Name == "" {
		o.Name = o.Package
	}
	if len(o.Name) > 253 || !dnsSubdomain.MatchString(o.Name) {
		return usagef("invalid name %q: a DNS-1123 subdomain (lower-case letters, digits, '-' and '.', at most 253)", o.Name)
	}
	if o.Namespace == "" {
		if !dnsLabel.MatchString(o.Package) {
			return usagef("package %q is not a namespace name: give the install namespace with --namespace", o.Package)
		}
		o.Namespace = o.Package
	}
	for _, ns := range []string{o.Namespace, o.WatchNamespace} {
		if ns != "" && !dnsLabel.MatchString(ns) {
			return usagef("invalid namespace %q: a DNS-1123 label (lower-case letters, digits and '-', at most 63)", ns)
		}
	}
	return nil
}

// watchNamespace is the watchNamespace config for a bundle whose install
// modes allow w ("" for none), from the one asked for.
func (o *ClusterExtensionOptions) watchNamespace(w olmv1.WatchNamespace) (string, error) {
	ns, asked := o.WatchNamespace, o.WatchNamespace
	switch w {
	case olmv1.WatchNone:
		if asked != "" {
			return "", usagef("--watch-namespace %s: the bundle supports AllNamespaces only; its config has no watchNamespace", asked)
		}
	case olmv1.WatchOptional:
	case olmv1.WatchOwn:
		if asked == "" {
			ns = o.Namespace
		} else if asked != o.Namespace {
			return "", usagef("--watch-namespace %s: the bundle supports OwnNamespace only, so it watches its install namespace %s (--namespace)", asked, o.Namespace)
		}
	case olmv1.WatchSingle:
		switch asked {
		case "":
			return "", usagef("the bundle supports SingleNamespace only: give the namespace it watches with --watch-namespace (another than its install namespace %s)", o.Namespace)
		case o.Namespace:
			return "", usagef("--watch-namespace %s: the bundle supports SingleNamespace only, so it watches another namespace than its install namespace %s", asked, o.Namespace)
		}
	case olmv1.WatchAny:
		if asked == "" {
			ns = o.Namespace
		}
	}
	return ns, nil
}

type clusterExtension struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Metadata   objectMeta           `json:"metadata"`
	Spec       clusterExtensionSpec `json:"spec"`
}

type clusterExtensionSpec struct {
	Namespace string           `json:"namespace"`
	Source    extensionSource  `json:"source"`
	Config    *extensionConfig `json:"config,omitempty"`
}

type extensionSource struct {
	SourceType string        `json:"sourceType"`
	Catalog    catalogFilter `json:"catalog"`
}

type catalogFilter struct {
	PackageName string   `json:"packageName"`
	Channels    []string `json:"channels,omitempty"`
	Version     string   `json:"version,omitempty"`
}

type extensionConfig struct {
	ConfigType string            `json:"configType"`
	Inline     map[string]string `json:"inline"`
}

func (o *ClusterExtensionOptions) object(watch string) clusterExtension {
	ce := clusterExtension{
		APIVersion: "olm.operatorframework.io/v1",
		Kind:       "ClusterExtension",
		Metadata:   objectMeta{Name: o.Name},
		Spec: clusterExtensionSpec{
			Namespace: o.Namespace,
			Source: extensionSource{SourceType: "Catalog", Catalog: catalogFilter{
				PackageName: o.Package, Channels: o.Channels, Version: o.Version}},
		},
	}
	if watch != "" {
		ce.Spec.Config = &extensionConfig{ConfigType: "Inline", Inline: map[string]string{"watchNamespace": watch}}
	}
	return ce
}

// notes says what applying the ClusterExtension depends on.
func notes(n *graph.Node, v *olmv1.Verdict, watch string) []string {
	out := []string{fmt.Sprintf("installs %s, the bundle OLM v1 resolves to today; upgrades follow the catalog", n.Label())}
	if watch != "" {
		out = append(out, fmt.Sprintf("watches namespace %s: spec.config needs OLM v1's experimental ClusterExtension CRD (and %s for bundles without AllNamespaces)", watch, olmv1.GateSingleOwnNamespace))
	}
	for _, is := range v.Issues {
		switch is.Level() {
		case olmv1.Conditional, olmv1.Migration, olmv1.NotChecked:
			if is.Code != olmv1.CodeWatchNamespace {
				out = append(out, is.Message+" ["+is.Code+"]")
			}
		}
	}
	return out
}

// pinHint names the newest bundle of channels OLM v1 would install, when
// the one it resolves to is refused.
func pinHint(p *graph.PackageGraph, cfg *declcfg.DeclarativeConfig, g olmv1.Gates, channels []string, refused *graph.Node) string {
	verdicts := map[string]*olmv1.Verdict{}
	for i := range cfg.Bundles {
		b, _ := olmv1.FromDeclcfg(&cfg.Bundles[i])
		verdicts[b.Name] = olmv1.Check(b, g)
	}
	r := &olmv1.PackageReport{Name: p.Name, Verdicts: verdicts}
	for _, n := range r.InstallableVersions(p, channels) {
		if graph.CompareVersions(n, refused) < 0 {
			return fmt.Sprintf("\nOLM v1 installs %s: pin it with --version %s", n.Label(), n.VersionString())
		}
	}
	return "\nnor does OLM v1 install any older bundle there"
}

// loadPackage loads the blobs of package pkg from a catalog directory (one
// package read, however large the catalog), file or image.
func loadPackage(ctx context.Context, ref, pkg string, reg render.RegistryOptions) (*declcfg.DeclarativeConfig, error) {
	st, err := os.Stat(ref)
	switch {
	case err == nil && st.IsDir():
		ix, err := declcfg.IndexDir(ctx, ref)
		if err != nil {
			return nil, err
		}
		defer ix.Close()
		if !slices.Contains(ix.Groups(), pkg) {
			return nil, suggest.Unknown("package", pkg, "", ix.Groups())
		}
		return ix.LoadGroup(ctx, pkg)
	case err == nil:
		return declcfg.LoadPath(ctx, ref)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return render.Render(ctx, render.Options{Refs: []string{ref}, AllowedRefMask: render.RefDCImage, Registry: reg})
}
