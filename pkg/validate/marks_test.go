package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v3"

	"github.com/opmkit/opm/pkg/bundlevalidate"
	"github.com/opmkit/opm/pkg/model"
)

// internalCodes cannot come from a loaded catalog (the conversion never
// builds such a model); pkg/model tests them on hand-built models.
// custom-schema needs a schema directory: TestCustomSchemas.
// dependencies-undecided needs a solver budget: TestCheckDependenciesUndecided.
var internalCodes = map[string]bool{
	model.CodePackageNameEmpty: true, model.CodePackageChannelKey: true,
	model.CodePackageChannelLink: true, model.CodePackageDefaultNotFound: true, model.CodeChannelNameEmpty: true,
	model.CodeChannelNoPackage: true, model.CodeChannelBundleKey: true, model.CodeChannelBundleLink: true,
	model.CodeBundleNameEmpty: true, model.CodeBundleChannelUnset: true, model.CodeBundlePackageUnset: true,
	model.CodeBundlePackageChannel: true, CodeCustomSchema: true, CodeDependenciesUndecided: true,
}

// mark is where a marker line of a test catalog says a finding must be.
// column 0: anywhere on the line.
type mark struct {
	line, column int
	codes        []string
}

// markerRE matches marker lines: "#   ^ code..." (the caret's column on
// the line above; "^ code" for column 1) and "#<- code..." (the line
// above).
var markerRE = regexp.MustCompile(`^(#? *)(\^|<-) ([a-z][a-z0-9 -]*)$`)

// stripMarkers removes the marker lines of data and returns what they
// mark, in the lines of what is left.
func stripMarkers(data []byte) ([]byte, []mark) {
	var out []byte
	var marks []mark
	line := 0
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if m := markerRE.FindStringSubmatch(strings.TrimRight(l, "\n")); m != nil {
			mk := mark{line: line, codes: strings.Fields(m[3])}
			if m[2] == "^" {
				mk.column = len(m[1]) + 1
			}
			marks = append(marks, mk)
			continue
		}
		if l != "" {
			line++
		}
		out = append(out, l...)
	}
	return out, marks
}

// ruleCase reads a test catalog: the files of a txtar archive.
func ruleCase(t *testing.T, file string) *txtar.Archive {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	return ar
}

// TestRules validates one failing catalog per rule, in testdata/rules
// (CODE.txtar): every finding its markers name must be at the marked line
// and column, the rule's finding has its severity, and the verdict is
// upstream's. Each YAML catalog is also validated as JSON (see jsonTwin),
// where the same findings must be at the same elements.
func TestRules(t *testing.T) {
	schemas, err := LoadSchemas("")
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("testdata/rules/*.txtar")
	if err != nil || len(files) == 0 {
		t.Fatalf("no rule cases: %v", err)
	}
	opts := Options{Schemas: schemas, Dependencies: &DependencyOptions{}}
	covered := map[string]bool{}
	for _, file := range files {
		code := strings.TrimSuffix(filepath.Base(file), ".txtar")
		covered[code] = true
		ar := ruleCase(t, file)
		opts := opts
		opts.Gate = gateCase(t, ar, code)
		for _, af := range ar.Files {
			if af.Name == policyCaseFile {
				continue
			}
			t.Run(code+"/"+af.Name, func(t *testing.T) {
				data, marks := stripMarkers(af.Data)
				res := validateNamed(t, string(data), af.Name, opts)
				checkMarks(t, res, af.Name, marks)
				checkRuleCase(t, res, code, af.Name, marks, opts.Gate)
				if !strings.HasSuffix(af.Name, ".yaml") || code == CodeLoad {
					return
				}
				twin, positions := jsonTwin(t, data)
				jres := validateNamed(t, string(twin), "twin.json", opts)
				for _, mk := range marks {
					for _, c := range mk.codes {
						f := findingAt(res, c, af.Name, mk)
						if f == nil {
							continue // reported by checkMarks
						}
						want := positions.of(f.Line, f.Path)
						if findingAt(jres, c, "twin.json", want) == nil {
							t.Errorf("JSON twin: no %s finding at twin.json:%d:%d (element %q); findings:\n%s\ntwin:\n%s", c, want.line, want.column, f.Path, describe(jres), twin)
						}
					}
				}
			})
		}
	}
	for _, r := range Rules {
		// the CRD upgrade and OLM v1 rules need bundle manifests: pkg/crd's
		// and pkg/olmv1's tests and cmd/opm's crd_*.txtar and olmv1_*.txtar
		// scripts cover them; the serve cache rules need caches:
		// pkg/action/serve's tests and validate_check_cache.txtar; the
		// bundle validators' (--check-bundles) need bundles:
		// pkg/bundlevalidate's conformance runs, cmd/opm's
		// bundle_validate_*.txtar and validate_check_bundles*.txtar
		if !covered[r.Code] && !internalCodes[r.Code] && !strings.HasPrefix(r.Code, CRDCodePrefix) && !strings.HasPrefix(r.Code, "olmv1-") &&
			r.Code != CodeServeCacheMismatch && r.Code != CodeServeCacheNotChecked && !gateCodesElsewhere[r.Code] &&
			!isBundleRule(r.Code) {
			t.Errorf("rule %s has no test case in testdata/rules", r.Code)
		}
	}
}

// findingAt returns the finding of code at mk in file, or nil.
func findingAt(res *Result, code, file string, mk mark) *Finding {
	for i, f := range res.Findings {
		if f.Code == code && f.File == file && f.Line == mk.line && (mk.column == 0 || f.Column == mk.column) {
			return &res.Findings[i]
		}
	}
	return nil
}

// checkMarks checks that every marked finding is where it is marked.
func checkMarks(t *testing.T, res *Result, file string, marks []mark) {
	t.Helper()
	for _, mk := range marks {
		for _, c := range mk.codes {
			if findingAt(res, c, file, mk) == nil {
				t.Errorf("no %s finding at %s:%d:%d; findings:\n%s", c, file, mk.line, mk.column, describe(res))
			}
		}
	}
}

// gateCodesElsewhere are the release gate rules without a case here: their
// findings have no position in a catalog file (catalog-empty, the
// directory rules, release-not-checked); gate_test.go and the gate_*.txtar
// scripts cover them.
// isBundleRule reports a rule of the bundle validation (--check-bundles).
func isBundleRule(code string) bool {
	if code == CodeBundleUnchecked {
		return true
	}
	for _, r := range bundlevalidate.Rules {
		if r.Code == code {
			return true
		}
	}
	return false
}

var gateCodesElsewhere = map[string]bool{CodeCatalogEmpty: true, CodeDirectoryEmpty: true, CodePackageDirMissing: true, CodeGateNotChecked: true}

// policyCaseFile is the file of a rule case that holds the policy turning
// its release gate rule on (the rule alone, at its level, without one).
const policyCaseFile = "policy.yaml"

// gateCase returns the release gate options of a case: those of its
// policy.yaml, or the release gate rule code alone at its level; nil for
// the other rules.
func gateCase(t *testing.T, ar *txtar.Archive, code string) *GateOptions {
	t.Helper()
	r, ok := GateRuleByCode(code)
	if !ok {
		return nil
	}
	for _, f := range ar.Files {
		if f.Name != policyCaseFile {
			continue
		}
		c, err := ParseConfig(f.Data, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		p, err := ResolvePolicy([]PolicyLayer{{Name: f.Name, Config: c}})
		if err != nil {
			t.Fatal(err)
		}
		target, err := p.Target()
		if err != nil {
			t.Fatal(err)
		}
		o, err := p.Gate(target, f.Name)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	return &GateOptions{Levels: map[string]Severity{code: r.Level}}
}

// checkRuleCase checks the finding of the case's rule: marked, of the
// rule's severity (its level in the case's policy, for a release gate
// rule), and the verdict.
func checkRuleCase(t *testing.T, res *Result, code, file string, marks []mark, gate *GateOptions) {
	t.Helper()
	marked := false
	for _, mk := range marks {
		if slices.Contains(mk.codes, code) {
			marked = true
		}
	}
	if !marked {
		t.Errorf("the %s case marks no %s finding", file, code)
	}
	r, ok := RuleByCode(code)
	if !ok {
		t.Fatalf("code %s is not in Rules", code)
	}
	wantSev := SeverityWarning
	if r.Upstream {
		wantSev = SeverityError
	}
	if gate != nil {
		wantSev = gate.Levels[code]
	}
	for _, f := range res.Findings {
		if f.Code == code && f.Severity != wantSev {
			t.Errorf("%s finding of severity %s, want %s", code, f.Severity, wantSev)
		}
	}
	if res.Passed != (wantSev == SeverityWarning && !hasErrors(res)) {
		t.Errorf("passed = %v with findings\n%s", res.Passed, describe(res))
	}
}

func describe(res *Result) string {
	var sb strings.Builder
	for _, f := range res.Findings {
		fmt.Fprintf(&sb, "  %s: %s [%s] %s\n", f.Pos(), f.Severity, f.Code, f.Path)
	}
	return sb.String()
}

// twinPositions are the positions of the elements of a JSON twin: per YAML
// document (by its first line), per element path.
type twinPositions struct {
	docs []twinDoc
}

type twinDoc struct {
	firstLine int // in the YAML
	pos       map[string]mark
}

// of returns where the element path of the YAML document holding yamlLine
// is in the twin: the element, or its deepest ancestor that exists.
func (tp twinPositions) of(yamlLine int, path string) mark {
	var doc twinDoc
	for _, d := range tp.docs {
		if d.firstLine <= yamlLine {
			doc = d
		}
	}
	elems := parsePath(path)
	for n := len(elems); n > 0; n-- {
		if p, ok := doc.pos[formatElems(elems[:n])]; ok {
			return p
		}
	}
	return doc.pos[""]
}

func formatElems(elems []pathElem) string {
	var sb strings.Builder
	for _, e := range elems {
		if e.index >= 0 {
			fmt.Fprintf(&sb, "[%d]", e.index)
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(e.key)
	}
	return sb.String()
}

// jsonTwin writes the documents of a YAML catalog as a stream of indented
// JSON values, recording where it writes each element: an account of the
// positions the JSON locator must find that does not depend on it.
func jsonTwin(t *testing.T, data []byte) ([]byte, twinPositions) {
	t.Helper()
	var tp twinPositions
	p := &twinPrinter{line: 1, col: 1}
	yamlLine := 1
	for _, doc := range regexp.MustCompile(`(?m)^---.*\n`).Split(string(data), -1) {
		first := yamlLine
		yamlLine += strings.Count(doc, "\n") + 1
		if strings.TrimSpace(doc) == "" {
			continue
		}
		var n yaml.Node
		if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
			t.Fatalf("twin: %v", err)
		}
		p.pos = map[string]mark{}
		p.value(n.Content[0], "", 0)
		p.write("\n")
		tp.docs = append(tp.docs, twinDoc{firstLine: first, pos: p.pos})
	}
	return p.buf.Bytes(), tp
}

type twinPrinter struct {
	buf       bytes.Buffer
	line, col int
	pos       map[string]mark
}

func (p *twinPrinter) write(s string) {
	for _, r := range s {
		if r == '\n' {
			p.line, p.col = p.line+1, 1
		} else {
			p.col += len(string(r))
		}
	}
	p.buf.WriteString(s)
}

func (p *twinPrinter) value(n *yaml.Node, path string, indent int) {
	for n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	p.pos[path] = mark{line: p.line, column: p.col}
	pad := strings.Repeat("  ", indent+1)
	switch n.Kind {
	case yaml.MappingNode:
		p.write("{")
		for i := 0; i+1 < len(n.Content); i += 2 {
			if i > 0 {
				p.write(",")
			}
			k, _ := json.Marshal(n.Content[i].Value)
			p.write("\n" + pad + string(k) + ": ")
			child := n.Content[i].Value
			if path != "" {
				child = path + "." + child
			}
			p.value(n.Content[i+1], child, indent+1)
		}
		p.write("\n" + strings.Repeat("  ", indent) + "}")
	case yaml.SequenceNode:
		p.write("[")
		for i, c := range n.Content {
			if i > 0 {
				p.write(",")
			}
			p.write("\n" + pad)
			p.value(c, fmt.Sprintf("%s[%d]", path, i), indent+1)
		}
		p.write("\n" + strings.Repeat("  ", indent) + "]")
	default:
		switch n.Tag {
		case "!!int", "!!float", "!!bool":
			p.write(n.Value)
		case "!!null":
			p.write("null")
		default:
			s, _ := json.Marshal(n.Value)
			p.write(string(s))
		}
	}
}
