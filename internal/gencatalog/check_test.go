package gencatalog

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/blang/semver/v4"
	"github.com/distribution/reference"
)

// catalog is a decoded catalog, for checks independent of pkg/declcfg.
type catalog struct {
	packages     []packageBlob
	channels     []channelBlob
	bundles      []bundleBlob
	deprecations []deprecationBlob
}

// readCatalog decodes every catalog.json under fsys.
func readCatalog(fsys fs.FS) (*catalog, error) {
	var c catalog
	err := fs.WalkDir(fsys, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(fsys, path)
		if err != nil {
			return err
		}
		return c.add(path, data)
	})
	return &c, err
}

func (c *catalog) add(path string, data []byte) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var raw json.RawMessage
		if err := dec.Decode(&raw); errors.Is(err, io.EOF) {
			return nil
		} else if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var m struct {
			Schema string `json:"schema"`
		}
		if err := json.Unmarshal(raw, &m); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		var err error
		switch m.Schema {
		case "olm.package":
			var b packageBlob
			err = json.Unmarshal(raw, &b)
			c.packages = append(c.packages, b)
		case "olm.channel":
			var b channelBlob
			err = json.Unmarshal(raw, &b)
			c.channels = append(c.channels, b)
		case "olm.bundle":
			var b bundleBlob
			err = json.Unmarshal(raw, &b)
			c.bundles = append(c.bundles, b)
		case "olm.deprecations":
			var b deprecationBlob
			err = json.Unmarshal(raw, &b)
			c.deprecations = append(c.deprecations, b)
		default:
			err = fmt.Errorf("unexpected schema %q", m.Schema)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}

var dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// check applies upstream's validation rules (behaviour doc §4 and §5.1)
// and the stricter checks of `opm validate --strict` (issue 3), and
// returns every problem found.
func (c *catalog) check() []string {
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }

	pkgs := map[string]packageBlob{}
	for _, p := range c.packages {
		if !dns1123Label.MatchString(p.Name) || len(p.Name) > 63 {
			fail("invalid package name %q", p.Name)
		}
		if _, ok := pkgs[p.Name]; ok {
			fail("duplicate package %q", p.Name)
		}
		pkgs[p.Name] = p
		if p.Icon == nil || len(p.Icon.Data) == 0 || !strings.HasPrefix(p.Icon.MediaType, "image/") {
			fail("package %q: missing icon", p.Name)
		}
	}

	type bundleInfo struct {
		version semver.Version
		used    bool
	}
	bundles := map[string]map[string]*bundleInfo{} // package -> name -> info
	providedGVK := map[gvk]bool{}
	providedVersions := map[string][]semver.Version{}
	var requiredGVK []gvk
	type pkgReq struct {
		PackageName  string `json:"packageName"`
		VersionRange string `json:"versionRange"`
	}
	var requiredPkg []pkgReq
	for _, b := range c.bundles {
		if _, ok := pkgs[b.Package]; !ok {
			fail("unknown package %q for bundle %q", b.Package, b.Name)
			continue
		}
		if bundles[b.Package] == nil {
			bundles[b.Package] = map[string]*bundleInfo{}
		}
		if _, ok := bundles[b.Package][b.Name]; ok {
			fail("package %q has duplicate bundle %q", b.Package, b.Name)
		}
		info := &bundleInfo{}
		bundles[b.Package][b.Name] = info
		for _, img := range append([]relatedImage{{Image: b.Image}}, b.RelatedImages...) {
			if _, err := reference.ParseNormalizedNamed(img.Image); err != nil || !strings.Contains(img.Image, "@sha256:") {
				fail("bundle %q: invalid image %q: %v", b.Name, img.Image, err)
			}
		}
		var nPkg int
		var csv struct {
			Metadata struct{ Name string }    `json:"metadata"`
			Spec     struct{ Version string } `json:"spec"`
		}
		var nCSV, nCRD int
		for _, p := range b.Properties {
			switch p.Type {
			case "olm.package":
				nPkg++
				var v struct{ PackageName, Version string }
				if err := json.Unmarshal(p.Value, &v); err != nil {
					fail("bundle %q: %v", b.Name, err)
				}
				if v.PackageName != b.Package {
					fail("package %q does not match olm.package property %q", b.Package, v.PackageName)
				}
				ver, err := semver.Parse(v.Version)
				if err != nil {
					fail("error parsing bundle %q version %q: %v", b.Name, v.Version, err)
				}
				info.version = ver
				providedVersions[b.Package] = append(providedVersions[b.Package], ver)
			case "olm.gvk":
				var v gvk
				if err := json.Unmarshal(p.Value, &v); err != nil {
					fail("bundle %q: %v", b.Name, err)
				}
				providedGVK[v] = true
			case "olm.gvk.required":
				var v gvk
				if err := json.Unmarshal(p.Value, &v); err != nil {
					fail("bundle %q: %v", b.Name, err)
				}
				requiredGVK = append(requiredGVK, v)
			case "olm.package.required":
				var v pkgReq
				if err := json.Unmarshal(p.Value, &v); err != nil {
					fail("bundle %q: %v", b.Name, err)
				}
				requiredPkg = append(requiredPkg, v)
			case "olm.maxOpenShiftVersion":
				var v string
				if err := json.Unmarshal(p.Value, &v); err != nil {
					fail("bundle %q: %v", b.Name, err)
				}
			case "olm.bundle.object":
				var v struct{ Data string }
				if err := json.Unmarshal(p.Value, &v); err != nil {
					fail("bundle %q: %v", b.Name, err)
				}
				data, err := base64.StdEncoding.DecodeString(v.Data)
				if err != nil {
					fail("bundle %q: %v", b.Name, err)
				}
				var obj struct{ Kind string }
				if err := json.Unmarshal(data, &obj); err != nil {
					fail("bundle %q: object: %v", b.Name, err)
				}
				switch obj.Kind {
				case "ClusterServiceVersion":
					nCSV++
					if err := json.Unmarshal(data, &csv); err != nil {
						fail("bundle %q: csv: %v", b.Name, err)
					}
				case "CustomResourceDefinition":
					nCRD++
				default:
					fail("bundle %q: unexpected object kind %q", b.Name, obj.Kind)
				}
			default:
				fail("bundle %q: unexpected property type %q", b.Name, p.Type)
			}
		}
		if nPkg != 1 {
			fail("package %q bundle %q must have exactly 1 \"olm.package\" property, found %d", b.Package, b.Name, nPkg)
		}
		if nCSV != 1 || nCRD < 1 || nCRD > 2 {
			fail("bundle %q: %d CSVs and %d CRDs", b.Name, nCSV, nCRD)
		}
		if csv.Metadata.Name != b.Name || csv.Spec.Version != info.version.String() {
			fail("bundle %q: CSV is %q version %q", b.Name, csv.Metadata.Name, csv.Spec.Version)
		}
	}
	for pkg, bs := range bundles {
		seen := map[string]string{}
		for name, info := range bs {
			if other, ok := seen[info.version.String()]; ok {
				fail("package %q: bundles %q and %q share version %s", pkg, name, other, info.version)
			}
			seen[info.version.String()] = name
		}
	}

	chans := map[string]map[string]bool{}
	for _, ch := range c.channels {
		bs, ok := bundles[ch.Package]
		if _, known := pkgs[ch.Package]; !known {
			fail("unknown package %q for channel %q", ch.Package, ch.Name)
			continue
		}
		if chans[ch.Package] == nil {
			chans[ch.Package] = map[string]bool{}
		}
		if chans[ch.Package][ch.Name] {
			fail("package %q has duplicate channel %q", ch.Package, ch.Name)
		}
		chans[ch.Package][ch.Name] = true
		if len(ch.Entries) == 0 {
			fail("invalid channel %q: channel must contain at least one bundle", ch.Name)
		}
		inChannel := map[string]entry{}
		incoming := map[string]int{}
		skipped := map[string]bool{}
		for _, e := range ch.Entries {
			if _, dup := inChannel[e.Name]; dup {
				fail("invalid package %q, channel %q: duplicate entry %q", ch.Package, ch.Name, e.Name)
			}
			inChannel[e.Name] = e
			if !ok || bs[e.Name] == nil {
				fail("no olm.bundle blobs found in package %q for olm.channel entries [%s]", ch.Package, e.Name)
			} else {
				bs[e.Name].used = true
			}
			if e.Replaces != "" {
				incoming[e.Replaces]++
				if bs[e.Replaces] == nil {
					fail("channel %q entry %q replaces %q, which is not in the package", ch.Name, e.Name, e.Replaces)
				}
			}
			for i, s := range e.Skips {
				if s == "" {
					fail("skip[%d] is empty", i)
				}
				incoming[s]++
				skipped[s] = true
				if bs[s] == nil {
					fail("channel %q entry %q skips %q, which is not in the package", ch.Name, e.Name, s)
				}
			}
			if e.SkipRange != "" {
				rng, err := semver.ParseRange(e.SkipRange)
				if err != nil {
					fail("invalid skipRange %q: %v", e.SkipRange, err)
				} else if !slices.ContainsFunc(providedVersions[ch.Package], rng) {
					fail("skipRange %q of %q covers no version of package %q", e.SkipRange, e.Name, ch.Package)
				}
			}
		}
		var heads []string
		for _, e := range ch.Entries {
			if incoming[e.Name] == 0 {
				heads = append(heads, e.Name)
			}
		}
		if len(heads) != 1 {
			fail("package %q channel %q: %d heads %v", ch.Package, ch.Name, len(heads), heads)
			continue
		}
		chain := map[string]bool{}
		for cur := heads[0]; ; {
			if chain[cur] {
				fail("channel %q: cycle at %q", ch.Name, cur)
				break
			}
			chain[cur] = true
			next := inChannel[cur].Replaces
			if _, in := inChannel[next]; !in || skipped[next] {
				break
			}
			cur = next
		}
		var stranded []string
		for _, e := range ch.Entries {
			if !chain[e.Name] && !skipped[e.Name] {
				stranded = append(stranded, e.Name)
			}
			if chain[e.Name] && skipped[e.Name] {
				fail("channel %q: %q is both skipped and on the replaces chain", ch.Name, e.Name)
			}
		}
		if len(stranded) > 0 {
			sort.Strings(stranded)
			fail("package %q channel %q contains stranded bundles: %s", ch.Package, ch.Name, strings.Join(stranded, ", "))
		}
	}
	for pkg, bs := range bundles {
		for name, info := range bs {
			if !info.used {
				fail("package %q, bundle %q not found in any channel entries", pkg, name)
			}
		}
	}
	for _, p := range c.packages {
		if p.DefaultChannel == "" || !chans[p.Name][p.DefaultChannel] {
			fail("package %q: default channel %q not found in channels list", p.Name, p.DefaultChannel)
		}
	}

	deps := map[string]bool{}
	for _, d := range c.deprecations {
		if deps[d.Package] {
			fail("expected a maximum of one deprecation per package: %q", d.Package)
		}
		deps[d.Package] = true
		if len(d.Entries) == 0 {
			fail("deprecation for %q has no entries", d.Package)
		}
		for _, e := range d.Entries {
			if e.Message == "" {
				fail("invalid deprecation: message must be set")
			}
			switch e.Reference.Schema {
			case "olm.package":
				if e.Reference.Name != "" {
					fail("package name must be empty for deprecated package %q", d.Package)
				}
			case "olm.channel":
				if !chans[d.Package][e.Reference.Name] {
					fail("cannot deprecate channel %q for package %q: channel not found", e.Reference.Name, d.Package)
				}
			case "olm.bundle":
				if bundles[d.Package][e.Reference.Name] == nil {
					fail("cannot deprecate bundle %q for package %q: bundle not found", e.Reference.Name, d.Package)
				}
			default:
				fail("deprecation for %q: unknown schema %q", d.Package, e.Reference.Schema)
			}
		}
	}

	for _, g := range requiredGVK {
		if !providedGVK[g] {
			fail("required GVK %v is provided by no bundle", g)
		}
	}
	for _, r := range requiredPkg {
		rng, err := semver.ParseRange(r.VersionRange)
		if err != nil {
			fail("required package %q: invalid range %q: %v", r.PackageName, r.VersionRange, err)
		} else if !slices.ContainsFunc(providedVersions[r.PackageName], rng) {
			fail("required package %q %s is provided by no bundle", r.PackageName, r.VersionRange)
		}
	}
	return errs
}
