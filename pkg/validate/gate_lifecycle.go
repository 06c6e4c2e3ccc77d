package validate

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/opmkit/opm/internal/ocpversion"
	"github.com/opmkit/opm/pkg/declcfg"
)

// LifecycleSchema is the schema of the lifecycle blobs Konflux injects into
// catalogs for OpenShift 5: per operator <major>.<minor> version, its
// support phases and the OpenShift versions it runs on.
const LifecycleSchema = "io.openshift.operators.lifecycles.v1alpha1"

// lifecycleSince is the first OpenShift version whose catalogs must carry
// a lifecycle blob per package.
var lifecycleSince = ocpversion.Version{Major: 5, Minor: 0}

// lifecycleBlob is what the checks read of a lifecycle blob; its shape is
// checked by CUE first (schemas/lifecycle.cue).
type lifecycleBlob struct {
	Package  string `json:"package"`
	Versions []struct {
		Name   string `json:"name"`
		Phases []struct {
			Name      string `json:"name"`
			StartDate string `json:"startDate"`
			EndDate   string `json:"endDate"`
		} `json:"phases"`
		PlatformCompatibility []struct {
			Name     string   `json:"name"`
			Versions []string `json:"versions"`
		} `json:"platformCompatibility"`
	} `json:"versions"`
}

// lifecycleChecks checks the group's lifecycle blobs: their shape, that
// their package exists and has one, that they cover the <major>.<minor> of
// every bundle, and that the versions the catalog ships run on the target.
func (g *group) lifecycleChecks(o *GateOptions, sc *schemaChecker) []Finding {
	mustHave := o.on(CodeLifecycleMissing) && o.Target != nil && o.Target.Compare(lifecycleSince) >= 0
	if !o.on(CodeLifecycleInvalid) && !o.on(CodeLifecycleUnknownPkg) && !o.on(CodeLifecycleDuplicate) &&
		!mustHave && !o.on(CodeLifecycleVersion) && !(o.on(CodeLifecyclePlatform) && o.Target != nil) {
		return nil
	}
	cfg := g.cfg
	var blobs []int
	for i := range cfg.Others {
		if cfg.Others[i].Schema == LifecycleSchema {
			blobs = append(blobs, i)
		}
	}
	var pkgAt blobID
	if len(cfg.Packages) > 0 {
		pkgAt = blobID{kind: declcfg.KindPackage, i: 0, ok: true}
	}
	// The <major>.<minor> of the package's bundles, and which bundles.
	minors := map[string][]string{}
	var order []string
	for i := range cfg.Bundles {
		f := gatherFacts(&cfg.Bundles[i], i)
		if !f.hasVersion {
			continue
		}
		mm := fmt.Sprintf("%d.%d", f.version.Major, f.version.Minor)
		if _, ok := minors[mm]; !ok {
			order = append(order, mm)
		}
		minors[mm] = append(minors[mm], f.b.Name)
	}
	var out []Finding
	if len(blobs) == 0 {
		if mustHave && pkgAt.ok && len(cfg.Bundles) > 0 {
			out = append(out, g.gateFinding(o, CodeLifecycleMissing, pkgAt, "", g.name, "", "",
				"add the package's "+LifecycleSchema+" blob (Konflux's fbc-inject-lifecycle task writes lifecycle.json beside the catalog)",
				"package %q has no lifecycle blob (schema %s), which a catalog for OpenShift %s must have", g.name, LifecycleSchema, o.Target))
		}
		return out
	}
	for n, i := range blobs {
		m := &cfg.Others[i]
		at := blobID{kind: declcfg.KindOther, i: i, ok: true}
		add := func(code, path, help, format string, args ...any) {
			out = append(out, g.gateFinding(o, code, at, path, m.Package, "", "", help, format, args...))
		}
		if !pkgAt.ok && m.Package != "" && o.on(CodeLifecycleUnknownPkg) {
			add(CodeLifecycleUnknownPkg, "package", "fix the package name, or drop the blob",
				"the lifecycle blob names package %q, which the catalog does not have", m.Package)
		}
		if n > 0 {
			if o.on(CodeLifecycleDuplicate) {
				add(CodeLifecycleDuplicate, "", "keep one lifecycle blob per package",
					"package %q has more than one lifecycle blob; this one is ignored", m.Package)
			}
			continue
		}
		if o.on(CodeLifecycleInvalid) {
			for _, e := range trimPath(sc.c.check(sc.c.lifecycle, m.Blob), 1) {
				msg := e.Message
				if e.Path != "" {
					msg = e.Path + ": " + msg
				}
				add(CodeLifecycleInvalid, e.Path, "", "lifecycle of package %q: %s", m.Package, msg)
			}
		}
		var lc lifecycleBlob
		if json.Unmarshal(m.Blob, &lc) != nil {
			continue // the schema said why
		}
		if o.on(CodeLifecycleInvalid) {
			out = append(out, g.lifecycleDates(o, at, &lc)...)
		}
		listed := map[string]int{}
		for vi, v := range lc.Versions {
			if _, dup := listed[v.Name]; !dup {
				listed[v.Name] = vi
			}
		}
		if o.on(CodeLifecycleVersion) {
			for _, mm := range order {
				if _, ok := listed[mm]; ok {
					continue
				}
				what := "bundle"
				if len(minors[mm]) > 1 {
					what = "bundles"
				}
				add(CodeLifecycleVersion, "versions", "add version \""+mm+"\" to the lifecycle, with its phases",
					"the lifecycle of package %q lists no version %s, the version of %s %s", m.Package, mm, what, strings.Join(quoteAll(minors[mm]), ", "))
			}
		}
		if o.on(CodeLifecyclePlatform) && o.Target != nil {
			for _, mm := range order {
				vi, ok := listed[mm]
				if !ok {
					continue
				}
				for pi, p := range lc.Versions[vi].PlatformCompatibility {
					if p.Name != "openshift" || slices.Contains(p.Versions, o.Target.String()) {
						continue
					}
					add(CodeLifecyclePlatform, fmt.Sprintf("versions[%d].platformCompatibility[%d].versions", vi, pi),
						"leave version "+mm+"'s bundles out of this catalog, or correct the lifecycle data",
						"the lifecycle of package %q says version %s runs on OpenShift %s, not on the target %s, but the catalog ships it (%s)",
						m.Package, mm, strings.Join(p.Versions, ", "), o.Target, strings.Join(quoteAll(minors[mm]), ", "))
				}
			}
		}
	}
	return out
}

// lifecycleDates checks what the schema cannot: that every date exists,
// that no phase ends before it starts, and that version names are unique.
func (g *group) lifecycleDates(o *GateOptions, at blobID, lc *lifecycleBlob) []Finding {
	var out []Finding
	m := g.cfg.Others[at.i]
	add := func(path, format string, args ...any) {
		out = append(out, g.gateFinding(o, CodeLifecycleInvalid, at, path, m.Package, "", "", "", format, args...))
	}
	seen := map[string]bool{}
	for vi, v := range lc.Versions {
		if seen[v.Name] {
			add(fmt.Sprintf("versions[%d].name", vi), "lifecycle of package %q: version %s is listed twice", m.Package, v.Name)
		}
		seen[v.Name] = true
		for pi, ph := range v.Phases {
			start, err1 := time.Parse(time.DateOnly, ph.StartDate)
			end, err2 := time.Parse(time.DateOnly, ph.EndDate)
			switch {
			case ph.StartDate == "" || ph.EndDate == "":
				// the schema says it is missing
			case err1 != nil:
				add(fmt.Sprintf("versions[%d].phases[%d].startDate", vi, pi), "lifecycle of package %q: version %s, phase %q: %q is not a date", m.Package, v.Name, ph.Name, ph.StartDate)
			case err2 != nil:
				add(fmt.Sprintf("versions[%d].phases[%d].endDate", vi, pi), "lifecycle of package %q: version %s, phase %q: %q is not a date", m.Package, v.Name, ph.Name, ph.EndDate)
			case end.Before(start):
				add(fmt.Sprintf("versions[%d].phases[%d].endDate", vi, pi), "lifecycle of package %q: version %s, phase %q ends (%s) before it starts (%s)", m.Package, v.Name, ph.Name, ph.EndDate, ph.StartDate)
			}
		}
	}
	return out
}
