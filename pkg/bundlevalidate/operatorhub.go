package bundlevalidate

import (
	"encoding/json"
	"fmt"
	"net/mail"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/blang/semver/v4"
)

// The OperatorHub validators: operatorhubv2 (the CSV's OperatorHub.io
// metadata and the deprecated APIs), capabilities, categories, and the
// deprecated operatorhub (all of these at once).

var validIconMediaTypes = map[string]bool{"image/gif": true, "image/jpeg": true, "image/png": true, "image/svg+xml": true}

var validCapabilities = map[string]bool{
	"Basic Install": true, "Seamless Upgrades": true, "Full Lifecycle": true, "Deep Insights": true, "Auto Pilot": true,
}

var standardCategories = map[string]bool{
	"AI/Machine Learning": true, "Application Runtime": true, "Big Data": true, "Cloud Provider": true,
	"Developer Tools": true, "Database": true, "Integration & Delivery": true, "Logging & Tracing": true,
	"Monitoring": true, "Modernization & Migration": true, "Networking": true, "OpenShift Optional": true,
	"Security": true, "Storage": true, "Streaming & Messaging": true, "Observability": true,
}

func (c *checker) checkOperatorHubV2() {
	c.begin("operatorhubv2")
	c.hubChecks("operatorhub", false)
	c.deprecatedAPIs()
}

func (c *checker) checkOperatorHub() {
	c.begin("operatorhub")
	c.hubChecks("operatorhub", true)
	c.deprecatedAPIs()
	c.begin("operatorhub")
	d := `The "operatorhub" validator is deprecated; for equivalent validation use "operatorhub/v2", "standardcapabilities" and "standardcategories" validators`
	c.add(Finding{Severity: SeverityWarning, Code: "operatorhub-deprecated", Upstream: apiError(levelWarn, "", str(""), d),
		Message: `the "operatorhub" validator is deprecated: select operatorhubv2, capabilities and categories (or suite=operatorframework)`}, at{})
}

// hubChecks are the OperatorHub.io checks of the CSV: provider,
// maintainers, links, (capabilities and categories for the deprecated
// validator), version, icon, minKubeVersion.
func (c *checker) hubChecks(prefix string, all bool) {
	csv := c.b.CSV
	m := csv.Manifest
	s := csv.Spec
	if strings.TrimSpace(s.Provider.Name) == "" {
		c.invalidCSV(SeverityError, prefix+"-provider", "csv.Spec.Provider.Name not specified", "spec.provider.name is not set", atManifest(m, "spec.provider.name"))
	}
	for i, mt := range s.Maintainers {
		where := atManifest(m, "spec.maintainers["+strconv.Itoa(i)+"]")
		if mt.Name == "" || mt.Email == "" {
			c.invalidCSV(SeverityError, prefix+"-maintainer", "csv.Spec.Maintainers elements should contain both name and email",
				fmt.Sprintf("maintainer %d must have both name and email", i), where)
		}
		if mt.Email != "" {
			if _, err := mail.ParseAddress(mt.Email); err != nil {
				d := fmt.Sprintf("csv.Spec.Maintainers email %s is invalid: %v", mt.Email, err)
				c.invalidCSV(SeverityError, prefix+"-maintainer-email", d, fmt.Sprintf("maintainer email %s is invalid: %v", mt.Email, err), atManifest(m, "spec.maintainers["+strconv.Itoa(i)+"].email"))
			}
		}
	}
	for i, l := range s.Links {
		where := atManifest(m, "spec.links["+strconv.Itoa(i)+"]")
		if l.Name == "" || l.URL == "" {
			c.invalidCSV(SeverityError, prefix+"-link", "csv.Spec.Links elements should contain both name and url",
				fmt.Sprintf("link %d must have both name and url", i), where)
		}
		if l.URL != "" {
			if _, err := url.ParseRequestURI(l.URL); err != nil {
				d := fmt.Sprintf("csv.Spec.Links url %s is invalid: %v", l.URL, err)
				c.invalidCSV(SeverityError, prefix+"-link-url", d, fmt.Sprintf("link url %s is invalid: %v", l.URL, err), atManifest(m, "spec.links["+strconv.Itoa(i)+"].url"))
			}
		}
	}
	if all {
		c.capabilities()
		c.categories()
	}
	if s.VersionParsed.Equals(semver.Version{}) {
		c.invalidCSV(SeverityError, prefix+"-version", "csv.Spec.Version must be set", "spec.version is not set (or 0.0.0)", atManifest(m, "spec.version"))
	}
	switch {
	case s.Icon == nil:
		c.invalidCSV(SeverityWarning, prefix+"-icon-missing", "csv.Spec.Icon not specified", "spec.icon is not set", atManifest(m, "spec.icon"))
	default:
		if len(s.Icon) != 1 {
			c.invalidCSV(SeverityError, prefix+"-icon-count", "csv.Spec.Icon should only have one element",
				fmt.Sprintf("spec.icon has %d elements; it should have one", len(s.Icon)), atManifest(m, "spec.icon"))
		}
		if len(s.Icon) == 0 {
			break // upstream reads the first element regardless, and fails
		}
		icon := s.Icon[0]
		where := atManifest(m, "spec.icon[0]")
		if icon.MediaType == "" || icon.Data == "" {
			c.invalidCSV(SeverityError, prefix+"-icon", "csv.Spec.Icon elements should contain both data and mediatype", "spec.icon[0] must have both base64data and mediatype", where)
		}
		if icon.MediaType != "" && !validIconMediaTypes[icon.MediaType] {
			d := fmt.Sprintf("csv.Spec.Icon %s does not have a valid mediatype", icon.MediaType)
			c.invalidCSV(SeverityError, prefix+"-icon-mediatype", d, fmt.Sprintf("spec.icon[0] media type %s is not one of image/gif, image/jpeg, image/png, image/svg+xml", icon.MediaType), atManifest(m, "spec.icon[0].mediatype"))
		}
	}
	c.checkMinKubeVersion(prefix)
}

func (c *checker) checkCapabilities() {
	c.begin("capabilities")
	c.capabilities()
}

func (c *checker) capabilities() {
	csv := c.b.CSV
	if v, ok := csv.Metadata.Annotations["capabilities"]; ok && !validCapabilities[v] {
		d := fmt.Sprintf("csv.Metadata.Annotations.Capabilities %q is not a valid capabilities level", v)
		c.invalidCSV(SeverityError, "capabilities-invalid", d,
			fmt.Sprintf("capabilities %q is not one of Basic Install, Seamless Upgrades, Full Lifecycle, Deep Insights, Auto Pilot", v),
			atManifest(csv.Manifest, "metadata.annotations.capabilities"))
	}
}

func (c *checker) checkCategories() {
	c.begin("categories")
	c.categories()
}

func (c *checker) categories() {
	csv := c.b.CSV
	v, ok := csv.Metadata.Annotations["categories"]
	if !ok {
		return
	}
	where := atManifest(csv.Manifest, "metadata.annotations.categories")
	set, custom := standardCategories, false
	if path := c.opts.CategoriesFile; path != "" {
		cats, err := c.customCategories(path)
		if err != nil {
			d := fmt.Sprintf("could not extract custom categories from categories %#v: %s", map[string]struct{}(nil), err)
			c.invalidCSV(SeverityError, "categories-file", d, fmt.Sprintf("the categories file %s (OPERATOR_BUNDLE_CATEGORIES): %v", path, err), where)
			return
		}
		set, custom = cats, true
	}
	for _, cat := range strings.Split(v, ",") {
		if set[strings.TrimSpace(cat)] {
			continue
		}
		kind := "standard"
		if custom {
			kind = "custom"
		}
		d := fmt.Sprintf("csv.Metadata.Annotations[\"categories\"] value %q is not in the set of %s categories", cat, kind)
		c.invalidCSV(SeverityError, "categories-invalid", d, fmt.Sprintf("category %q is not one of the %s categories", strings.TrimSpace(cat), kind), where)
	}
}

// customCategories reads a categories file ({"categories": [...]}).
func (c *checker) customCategories(path string) (map[string]bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("finding category file: %w", err)
	}
	read := c.opts.ReadFile
	if read == nil {
		read = os.ReadFile
	}
	data, err := read(abs)
	if err != nil {
		return nil, fmt.Errorf("reading category file: %w", err)
	}
	var f struct {
		Categories []string `json:"categories"`
	}
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("unmarshaling category file: %w", err)
	}
	out := map[string]bool{}
	for _, cat := range f.Categories {
		out[cat] = true
	}
	return out, nil
}
