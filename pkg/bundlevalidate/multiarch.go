package bundlevalidate

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/opmkit/opm/pkg/bundle/manifest"
)

// The multiarch validator: the platforms the CSV claims (its
// operatorframework.io/arch.* and os.* labels, amd64 and linux by
// default) against those of the manager image, the other images of its
// deployments and its related images, and against the node affinity of
// the deployments. Images are read through Options.Inspect
// (go-containerregistry, no container engine); where upstream asks
// `docker manifest inspect` and sees no platform for an image that is not
// an index, Inspect reports the platform of its config.

// ContainerToolsKey is the --optional-values key of the container tool
// (upstream's choice of docker or podman; checked, unused).
const ContainerToolsKey = "container-tools"

const (
	archLabel = "operatorframework.io/arch."
	osLabel   = "operatorframework.io/os."
)

// Platform is an image's operating system and architecture.
type Platform struct {
	OS           string `json:"os"`
	Architecture string `json:"architecture"`
}

func (p Platform) String() string { return p.OS + "/" + p.Architecture }

var errorPlatform = Platform{OS: "error", Architecture: "error"}

// imageSet is a set of images with their platforms, in a fixed order.
type imageSet struct {
	order []string
	plats map[string][]Platform
}

func newImageSet() *imageSet { return &imageSet{plats: map[string][]Platform{}} }

func (s *imageSet) add(img string) {
	if _, ok := s.plats[img]; !ok {
		s.order = append(s.order, img)
		s.plats[img] = []Platform{}
	}
}

func (s *imageSet) has(img string) bool { _, ok := s.plats[img]; return ok }

func (c *checker) checkMultiArch() {
	c.begin("multiarch")
	csv := c.b.CSV
	m := csv.Manifest
	tool := strings.ToLower(c.opts.Values[ContainerToolsKey])
	if tool != "" && tool != "none" && tool != "docker" && tool != "podman" {
		d := fmt.Sprintf("invalid value (%s) for (%s). One of: [docker, podman, none] (If not set, the default value is docker)", ContainerToolsKey, tool)
		c.failed(SeverityError, "multiarch-container-tools", d, fmt.Sprintf("--optional-values container-tools=%s: one of docker, podman, none", tool), at{})
		return
	}
	var archLabels, osLabels []string
	for _, k := range sortedLabelKeys(csv.Metadata.Labels) {
		if csv.Metadata.Labels[k] != "supported" {
			continue
		}
		if strings.Contains(k, archLabel) {
			archLabels = append(archLabels, k)
		}
		if strings.Contains(k, osLabel) {
			osLabels = append(osLabels, k)
		}
	}
	managers, others, related := newImageSet(), newImageSet(), newImageSet()
	affinity := map[string][]Platform{}
	deps := csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs
	for _, d := range deps {
		found := false
		for _, ct := range d.Spec.Template.Spec.Containers {
			if managers.has(ct.Image) {
				continue
			}
			if ct.Name == "manager" {
				managers.add(ct.Image)
				found = true
			}
			affinity[ct.Image] = affinityPlatforms(d.Spec.Template.Spec.Affinity)
		}
		if !found {
			for _, ct := range d.Spec.Template.Spec.Containers {
				if ct.Name == "kube-rbac-proxy" || managers.has(ct.Image) {
					continue
				}
				managers.add(ct.Image)
			}
		}
	}
	for _, d := range deps {
		for _, ct := range d.Spec.Template.Spec.Containers {
			if !managers.has(ct.Image) {
				others.add(ct.Image)
			}
		}
	}
	for _, r := range csv.Spec.RelatedImages {
		related.add(r.Image)
	}
	for _, set := range []*imageSet{managers, others, related} {
		for _, img := range set.order {
			plats, err := c.inspect(img)
			if err != nil {
				c.failed(SeverityWarning, "multiarch-inspect", fmt.Sprintf("unable to inspect the image (%s) : %s", img, err),
					fmt.Sprintf("image %s could not be inspected: %v", img, err), atManifest(m, imagePath(csv, img)))
				set.plats[img] = []Platform{errorPlatform}
				continue
			}
			set.plats[img] = append(set.plats[img], plats...)
		}
	}

	// What the CSV supports: its labels (amd64 and linux without any), and
	// what the manager images provide.
	archs, oses := map[string]bool{}, map[string]bool{}
	for _, l := range archLabels {
		archs[strings.ReplaceAll(l, archLabel, "")] = true
	}
	if len(archLabels) == 0 {
		archs["amd64"] = true
	}
	for _, l := range osLabels {
		oses[strings.ReplaceAll(l, osLabel, "")] = true
	}
	if len(osLabels) == 0 {
		oses["linux"] = true
	}
	for _, img := range managers.order {
		for _, p := range managers.plats[img] {
			if p.Architecture != "" {
				archs[p.Architecture] = true
			}
			if p.OS != "" {
				oses[p.OS] = true
			}
		}
	}
	managerList := managers.order

	// Every configured OS.arch must be provided by every image.
	var configuredOS, configuredArch []string
	if len(osLabels) == 0 {
		configuredOS = []string{"linux"}
	}
	for _, l := range osLabels {
		configuredOS = append(configuredOS, strings.ReplaceAll(l, osLabel, ""))
	}
	if len(archLabels) == 0 {
		configuredArch = []string{"amd64"}
	}
	for _, l := range archLabels {
		configuredArch = append(configuredArch, strings.ReplaceAll(l, archLabel, ""))
	}
	unsupported := map[string][]string{}
	var unsupportedOrder []string
	for _, set := range []*imageSet{managers, others, related} {
		for _, os := range configuredOS {
			for _, arch := range configuredArch {
				config := os + "." + arch
				for _, img := range set.order {
					ok := false
					for _, p := range set.plats[img] {
						if p.OS == "error" || p.OS+"."+p.Architecture == config {
							ok = true
							break
						}
					}
					if !ok {
						if _, seen := unsupported[config]; !seen {
							unsupportedOrder = append(unsupportedOrder, config)
						}
						unsupported[config] = append(unsupported[config], img)
					}
				}
			}
		}
	}
	sort.Strings(unsupportedOrder)
	for _, config := range unsupportedOrder {
		imgs := append([]string(nil), unsupported[config]...)
		sort.Strings(imgs)
		d := fmt.Sprintf("not all images specified are providing the support described via the CSV labels. "+
			"Note that (OS.architecture): (%s) was not found for the image(s) %s", config, "["+strings.Join(imgs, " ")+"]")
		c.failed(SeverityError, "multiarch-unsupported", d,
			fmt.Sprintf("the CSV claims %s (its labels, or amd64 and linux without labels), which image(s) %s do not provide", config, strings.Join(imgs, ", ")),
			atManifest(m, "metadata.labels"))
	}

	c.missingLabels(archs, archLabels, "amd64", archLabel, "Arch(s)", managerList,
		"and if you support more than amd64 architectures, you MUST,")
	c.missingLabels(oses, osLabels, "linux", osLabel, "OS(s)", managerList,
		"and if you support more than linux OS you MUST,")
	c.otherImages(others, archs, oses, managerList)
	c.otherImages(related, archs, oses, managerList)
	c.nodeAffinity(managers, affinity)
	c.nodeAffinity(others, affinity)
}

// inspect asks Options.Inspect for an image's platforms, twice.
func (c *checker) inspect(img string) ([]Platform, error) {
	if c.opts.Inspect == nil {
		return nil, fmt.Errorf("no image inspector")
	}
	p, err := c.opts.Inspect(c.ctx, img)
	if err != nil {
		p, err = c.opts.Inspect(c.ctx, img)
	}
	return p, err
}

// imagePath is the path of the first container or related image using img.
func imagePath(csv *manifest.CSV, img string) string {
	for i, d := range csv.Spec.InstallStrategy.StrategySpec.DeploymentSpecs {
		for j, ct := range d.Spec.Template.Spec.Containers {
			if ct.Image == img {
				return fmt.Sprintf("spec.install.spec.deployments[%d].spec.template.spec.containers[%d].image", i, j)
			}
		}
	}
	for i, r := range csv.Spec.RelatedImages {
		if r.Image == img {
			return "spec.relatedImages[" + strconv.Itoa(i) + "].image"
		}
	}
	return "spec"
}

func affinityPlatforms(a *manifest.Affinity) []Platform {
	out := []Platform{}
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.Required == nil {
		return out
	}
	for _, t := range a.NodeAffinity.Required.NodeSelectorTerms {
		var archs, oses []string
		for _, e := range t.MatchExpressions {
			if e.Operator != "In" {
				continue
			}
			switch e.Key {
			case "kubernetes.io/arch":
				archs = e.Values
			case "kubernetes.io/os":
				oses = e.Values
			}
		}
		for _, os := range oses {
			for _, arch := range archs {
				out = append(out, Platform{OS: os, Architecture: arch})
			}
		}
	}
	return out
}

func quotedList(l []string) string {
	q := make([]string, len(l))
	for i, s := range l {
		q[i] = strconv.Quote(s)
	}
	return "[" + strings.Join(q, " ") + "]"
}

func platformList(ps []Platform) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		q[i] = strconv.Quote(p.String())
	}
	return "[" + strings.Join(q, " ") + "]"
}

func (c *checker) missingLabels(supported map[string]bool, labels []string, dflt, prefix, what string, managers []string, must string) {
	var missing []string
	for s := range supported {
		found := false
		for _, l := range labels {
			if strings.Contains(l, s) {
				found = true
				break
			}
		}
		if !found && s != "error" && !(s == dflt && len(supported) == 1) {
			missing = append(missing, s)
		}
	}
	if len(missing) == 0 {
		return
	}
	sort.Strings(missing)
	d := fmt.Sprintf("check if the CSV is missing the label (%s<value>) for the %s: %s. "+
		"Be aware that your Operator manager image %s provides this support. "+
		"Thus, it is very likely that you want to provide it %s"+
		"use the required labels for all which are supported."+
		"Otherwise, your solution cannot be listed on the cluster for these architectures",
		prefix, what, quotedList(missing), quotedList(managers), must)
	c.failed(SeverityWarning, "multiarch-labels", d,
		fmt.Sprintf("the manager image(s) support %s %s, which the CSV does not claim with %s<value>: supported labels", strings.ToLower(strings.TrimSuffix(what, "(s)")), strings.Join(missing, ", "), prefix),
		atManifest(c.b.CSV.Manifest, "metadata.labels"))
}

func (c *checker) otherImages(set *imageSet, archs, oses map[string]bool, managers []string) {
	for _, img := range set.order {
		plats := set.plats[img]
		for _, part := range []struct {
			what string
			want map[string]bool
			of   func(Platform) string
		}{{"Arch(s)", archs, func(p Platform) string { return p.Architecture }}, {"OS(s)", oses, func(p Platform) string { return p.OS }}} {
			var missing []string
			for w := range part.want {
				found := false
				for _, p := range plats {
					if part.of(p) == "error" || part.of(p) == w {
						found = true
						break
					}
				}
				if !found && w != "error" {
					missing = append(missing, w)
				}
			}
			if len(missing) == 0 {
				continue
			}
			sort.Strings(missing)
			d := fmt.Sprintf("check if the image %s should not support %s. "+
				"Note that this CSV has labels for this %s "+
				"Your manager image %s are providing this support OR the CSV is configured via labels "+
				"to support it. Then, please verify if this image should not support it",
				img, quotedList(missing), part.what, quotedList(managers))
			c.failed(SeverityWarning, "multiarch-image-platforms", d,
				fmt.Sprintf("image %s does not provide %s, which the CSV or its manager image support", img, strings.Join(missing, ", ")),
				atManifest(c.b.CSV.Manifest, imagePath(c.b.CSV, img)))
		}
	}
}

func (c *checker) nodeAffinity(set *imageSet, affinity map[string][]Platform) {
	csv := c.b.CSV
	for _, img := range set.order {
		plats := set.plats[img]
		valid := true
		for _, p := range plats {
			if p.Architecture == "error" {
				valid = false
				break
			}
		}
		where := atManifest(csv.Manifest, imagePath(csv, img))
		aff := affinity[img]
		if len(aff) == 0 {
			if !valid {
				d := fmt.Sprintf("check if the CSV is missing a node affinity configuration for the image: %q. ", img)
				c.failed(SeverityWarning, "multiarch-affinity-missing", d, fmt.Sprintf("the deployment of image %s has no node affinity for its platforms", img), where)
			}
			d := fmt.Sprintf("check if the CSV has a missing or invalid node affinity configuration for the image: %q. "+
				"The image data suggests the following platforms are supported: %s", img, platformList(plats))
			c.failed(SeverityWarning, "multiarch-affinity-missing", d,
				fmt.Sprintf("the deployment of image %s has no required node affinity; the image supports %s", img, platformList(plats)), where)
			continue
		}
		var extra, missing []Platform
		for _, a := range aff {
			if !containsPlatform(plats, a) {
				extra = append(extra, a)
			}
		}
		for _, p := range plats {
			if !containsPlatform(aff, p) {
				missing = append(missing, p)
			}
		}
		if len(extra) > 0 {
			d := fmt.Sprintf("the CSV includes %s in the node affinity configuration for the image: %q, but "+
				"the image data suggests the following platforms are supported: %s", platformList(extra), img, platformList(plats))
			c.failed(SeverityWarning, "multiarch-affinity-extra", d,
				fmt.Sprintf("the node affinity of image %s allows %s, which the image does not provide", img, platformList(extra)), where)
		}
		if len(missing) > 0 {
			d := fmt.Sprintf("the image data indicates %s is supported for the image: %q, but "+
				"the node affinity configuration for the image only specifies %s", platformList(missing), img, platformList(aff))
			c.failed(SeverityWarning, "multiarch-affinity-narrow", d,
				fmt.Sprintf("image %s also supports %s, which its node affinity leaves out", img, platformList(missing)), where)
		}
	}
}

func containsPlatform(l []Platform, p Platform) bool {
	for _, x := range l {
		if x == p {
			return true
		}
	}
	return false
}
