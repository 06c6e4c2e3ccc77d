package converttemplate

import (
	"bytes"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/template"
)

func TestRun(t *testing.T) {
	in := "schema: olm.bundle\nname: foo.v1\nimage: example.com/foo:1\n"
	for typ, want := range map[template.Type]string{
		template.Basic:       "{\n    \"schema\": \"olm.template.basic\",\n    \"entries\": [\n        {\n            \"schema\": \"olm.bundle\",\n            \"image\": \"example.com/foo:1\"\n        }\n    ]\n}\n",
		template.Substitutes: "{\n    \"schema\": \"olm.template.substitutes\",\n    \"entries\": [\n        {\n            \"image\": \"example.com/foo:1\",\n            \"name\": \"foo.v1\",\n            \"schema\": \"olm.bundle\"\n        }\n    ],\n    \"substitutions\": []\n}\n",
	} {
		res, err := Run(Options{Type: typ, Input: strings.NewReader(in), Name: "c.yaml"})
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := template.WriteConverted(&b, res.Template, "json"); err != nil {
			t.Fatal(err)
		}
		if b.String() != want {
			t.Errorf("%s:\n%s\nwant\n%s", typ, b.String(), want)
		}
	}
	if _, err := Run(Options{Type: template.Semver, Input: strings.NewReader(in)}); err == nil {
		t.Error("semver conversion accepted")
	}
	if _, err := Run(Options{Type: template.Basic, Input: strings.NewReader("a: [\n"), Name: "c.yaml"}); err == nil || !strings.HasPrefix(err.Error(), "c.yaml:") {
		t.Errorf("malformed: %v", err)
	}
}
