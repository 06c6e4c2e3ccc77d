package bundlevalidate

import (
	"fmt"

	"github.com/opmkit/opm/pkg/bundle/manifest"
	"github.com/opmkit/opm/pkg/declcfg"
)

// Severity is a finding's severity: "error" or "warning", as
// pkg/validate's.
type Severity string

// Severities.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Finding is one problem a validator found in a bundle.
type Finding struct {
	Severity Severity
	// Validator is the validator that found it (see Validators).
	Validator string
	// Code is the rule code (see Rules).
	Code string
	// Upstream is the message operator-sdk prints for it, level included
	// ("Warning: Value : (foo.v0.1.0) csv.Spec.minKubeVersion is not
	// informed..."): what -o json-alpha1 writes. Findings of the bundle
	// format share one upstream message (see Result.Alpha1).
	Upstream string
	// Message says the same for people: without the boilerplate of
	// upstream's error type, with what it is about.
	Message string
	// Pos is where: the file (relative to the bundle root), line and
	// column of the element, once located (see Locate).
	Pos declcfg.Position
	// Path is the element's path in its file ("spec.installModes[1]").
	Path string
	// Help says what to do about it, when there is more to say than
	// Message (findings of other checkers, such as OLM v1's).
	Help string

	// at locates Path (nil: the bundle as a whole).
	at locator
	// format marks the bundle format errors operator-sdk joins into one
	// message.
	format bool
}

// locator is what findings are positioned in: a manifest or a metadata
// file.
type locator interface {
	Locate(path string) declcfg.Position
}

// Levels of upstream's messages (operator-framework/api's errors.Level).
const (
	levelError = "Error"
	levelWarn  = "Warning"
)

// apiError is the message of an operator-framework/api validation error:
// "Level: Field f, Value v: detail" with the parts that are set, where a
// value of "" prints as an empty value ("Value : detail") and a nil value
// not at all.
func apiError(level, field string, value *string, detail string) string {
	if detail != "" {
		detail = ": " + detail
	}
	switch {
	case field != "" && value != nil:
		detail = fmt.Sprintf("Field %s, Value %s%s", field, *value, detail)
	case field != "":
		detail = fmt.Sprintf("Field %s%s", field, detail)
	case value != nil:
		detail = fmt.Sprintf("Value %s%s", *value, detail)
	}
	if detail == "" {
		return "ErrMessageMissing"
	}
	return level + ": " + detail
}

func levelOf(sev Severity) string {
	if sev == SeverityError {
		return levelError
	}
	return levelWarn
}

func str(s string) *string { return &s }

// at is a position to report a finding at: a file and an element path.
type at struct {
	l    locator
	path string
}

func atManifest(m *manifest.Manifest, path string) at {
	if m == nil {
		return at{}
	}
	return at{l: m, path: path}
}

func atMetadata(f *manifest.MetadataFile, path string) at {
	if f == nil {
		return at{}
	}
	return at{l: f, path: path}
}

// ManifestOf returns the manifest a finding is about (nil when it is
// about a metadata file or the bundle as a whole, or once its report is
// released).
func ManifestOf(f Finding) *manifest.Manifest {
	m, _ := f.at.(*manifest.Manifest)
	return m
}
