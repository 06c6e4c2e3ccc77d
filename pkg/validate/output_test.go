package validate

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func sampleResult(t *testing.T) *Result {
	t.Helper()
	catalog := strings.Replace(base, "image: quay.io/foo/bundle:v0.2.0", "image: ''", 1) +
		"---\nschema: olm.channel\npackage: foo\nname: beta\nentries:\n  - name: foo.v0.2.0\n    skips: ['a,b:c%']\n"
	res := validateText(t, catalog, Options{})
	if res.Passed || res.Tree == nil {
		t.Fatalf("sample catalog passed: %+v", res)
	}
	return res
}

func TestWriteJSONKeepsUpstreamShape(t *testing.T) {
	res := sampleResult(t)
	var buf bytes.Buffer
	if err := WriteJSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	if !strings.HasPrefix(out, "{\n  \"passed\": false,\n  \"error\": {\n    \"message\": ") || !strings.HasSuffix(out, "}\n") {
		t.Errorf("not upstream's layout:\n%s", out)
	}
	var got struct {
		Passed bool `json:"passed"`
		Error  struct {
			Message string `json:"message"`
		} `json:"error"`
		Findings []Finding `json:"findings"`
	}
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if got.Error.Message != res.Message || len(got.Findings) != len(res.Findings) {
		t.Errorf("round trip = %+v", got)
	}

	buf.Reset()
	if err := WriteJSON(&buf, &Result{Passed: true}); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "{\n  \"passed\": true\n}\n" {
		t.Errorf("passing JSON = %q", buf.String())
	}
	buf.Reset()
	if err := WriteYAML(&buf, &Result{Passed: true}); err != nil {
		t.Fatal(err)
	}
	if buf.String() != "passed: true\n\n" {
		t.Errorf("passing YAML = %q", buf.String())
	}
}

func TestWriteText(t *testing.T) {
	res := sampleResult(t)
	var buf bytes.Buffer
	if err := WriteText(&buf, res, true); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"invalid index:\n└── invalid package \"foo\":\n",
		"bundle image must be set (catalog.yaml:24:8)",
		"catalog.yaml:34:13: warning: bundle \"foo.v0.2.0\" skips \"a,b:c%\", which is not a bundle of package \"foo\" [edge-target-missing]\n    help: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
	buf.Reset()
	if err := WriteText(&buf, &Result{Passed: true}, false); err != nil || buf.Len() != 0 {
		t.Errorf("clean catalog wrote %q, %v", buf.String(), err)
	}
}

func TestWriteGitHub(t *testing.T) {
	res := &Result{Findings: []Finding{
		{Severity: SeverityError, Code: "c", Message: "line one\nline 100%", File: "a,b:c.yaml", Line: 3, Column: 1},
		{Severity: SeverityWarning, Code: "w", Message: "no file", Help: "do this"},
	}}
	var buf bytes.Buffer
	if err := WriteGitHub(&buf, res); err != nil {
		t.Fatal(err)
	}
	want := "::error file=a%2Cb%3Ac.yaml,line=3,col=1,title=opm validate%3A c::line one%0Aline 100%25\n" +
		"::warning title=opm validate%3A w::no file%0Ado this\n"
	if buf.String() != want {
		t.Errorf("github =\n%s\nwant\n%s", buf.String(), want)
	}
}

func TestWriteSARIF(t *testing.T) {
	res := sampleResult(t)
	var buf bytes.Buffer
	if err := WriteSARIF(&buf, res, ToolInfo{Name: "opm", Version: "v1"}); err != nil {
		t.Fatal(err)
	}
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Rules []struct {
						ID string `json:"id"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex int    `json:"ruleIndex"`
				Level     string `json:"level"`
				Locations []struct {
					PhysicalLocation struct {
						ArtifactLocation struct {
							URI string `json:"uri"`
						} `json:"artifactLocation"`
						Region struct {
							StartLine int `json:"startLine"`
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(buf.Bytes(), &log); err != nil {
		t.Fatal(err)
	}
	if log.Version != "2.1.0" || len(log.Runs) != 1 || len(log.Runs[0].Results) != len(res.Findings) {
		t.Fatalf("sarif = %s", buf.String())
	}
	run := log.Runs[0]
	for i, r := range run.Results {
		f := res.Findings[i]
		if run.Tool.Driver.Rules[r.RuleIndex].ID != r.RuleID || r.RuleID != f.Code || r.Level != string(f.Severity) ||
			r.Locations[0].PhysicalLocation.ArtifactLocation.URI != f.File || r.Locations[0].PhysicalLocation.Region.StartLine != f.Line {
			t.Errorf("result %d = %+v, finding %+v", i, r, f)
		}
	}
}

// TestDeterministic validates a catalog with errors in several packages,
// channels and bundles (held in Go maps) many times: the output never
// changes.
func TestDeterministic(t *testing.T) {
	var sb strings.Builder
	for _, p := range []string{"a", "b", "c", "d"} {
		sb.WriteString(strings.NewReplacer("foo", p, "image: quay.io/"+p+"/bundle:v0.2.0", "image: ''").Replace(base))
		sb.WriteString("---\nschema: olm.channel\npackage: " + p + "\nname: fast\nentries:\n  - name: " + p + ".v0.1.0\n  - name: " + p + ".v0.2.0\n    skips: ['', x]\n")
		sb.WriteString("---\n")
	}
	catalog := sb.String()
	var first string
	for i := 0; i < 20; i++ {
		res := validateText(t, catalog, Options{})
		var buf bytes.Buffer
		if err := WriteJSON(&buf, res); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			first = buf.String()
			if res.Passed || strings.Count(res.Message, "invalid package") != 4 {
				t.Fatalf("message:\n%s", res.Message)
			}
			continue
		}
		if buf.String() != first {
			t.Fatalf("run %d differs:\n%s\nfirst:\n%s", i, buf.String(), first)
		}
	}
}
