package validate

import (
	"bytes"
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
)

// FuzzValidate feeds malformed catalogs to the loader and the validator:
// no panic, and every outcome is a load error or a result whose verdict
// matches its findings and upstream's ConvertToModel.
func FuzzValidate(f *testing.F) {
	f.Add(base)
	files, err := filepath.Glob("testdata/rules/*.txtar")
	if err != nil {
		f.Fatal(err)
	}
	for _, file := range files {
		ar, err := txtar.ParseFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, af := range ar.Files {
			data, _ := stripMarkers(af.Data)
			f.Add(string(data))
		}
	}
	f.Add(`{"schema":"olm.package","name":"a","defaultChannel":"c"}{"schema":"olm.channel","package":"a","name":"c","entries":[{"name":"b","skipRange":">=0.0.0"}]}{"schema":"olm.bundle","package":"a","name":"b","image":"x","properties":[{"type":"olm.package","value":{"packageName":"a","version":"1.0.0"}},{"type":"olm.constraint","value":{"all":{"constraints":[{}]}}}]}`)
	schemas, err := LoadSchemas("")
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, catalog string) {
		cfg, err := declcfg.LoadReader(strings.NewReader(catalog), "catalog.yaml")
		if err != nil {
			res := LoadErrorResult(err)
			if res.Passed || len(res.Findings) != 1 || res.Message == "" {
				t.Fatalf("load error result %+v", res)
			}
			return
		}
		res, err := Validate(context.Background(), cfg, Options{Schemas: schemas, Concurrency: 1})
		if err != nil {
			t.Fatalf("Validate() error = %v", err)
		}
		errs, _ := res.Counts()
		if res.Passed != (errs == 0) || res.Passed != (res.Message == "") {
			t.Fatalf("verdict %v with %d errors and message %q", res.Passed, errs, res.Message)
		}
		_, merr := model.ConvertToModel(*cfg)
		upstreamFailed := false
		for _, f := range res.Findings {
			if r, ok := RuleByCode(f.Code); ok && r.Upstream && f.Code != CodeCustomSchema {
				upstreamFailed = true
			}
			if f.Code == "" || f.Message == "" {
				t.Fatalf("finding without code or message: %+v", f)
			}
		}
		if (merr != nil) != upstreamFailed {
			t.Fatalf("ConvertToModel error = %v, but upstream-rule findings = %v", merr, upstreamFailed)
		}
		if merr != nil && merr.Error() != res.Message {
			t.Fatalf("message %q, ConvertToModel says %q", res.Message, merr)
		}

		// One package at a time from the index, with findings placed at
		// their elements: the same verdict, message and rules.
		ix, err := declcfg.IndexBytes(context.Background(), []byte(catalog), "catalog.yaml")
		if err != nil {
			t.Fatalf("LoadReader succeeded, IndexBytes failed: %v", err)
		}
		ires, err := ValidateIndex(context.Background(), ix, Options{Schemas: schemas, Concurrency: 1})
		if err != nil {
			t.Fatalf("ValidateIndex() error = %v", err)
		}
		if ires.Passed != res.Passed || ires.Message != res.Message || codeSet(ires) != codeSet(res) {
			t.Fatalf("ValidateIndex: passed %v, message %q, rules %s; Validate: %v, %q, %s",
				ires.Passed, ires.Message, codeSet(ires), res.Passed, res.Message, codeSet(res))
		}
		for _, f := range ires.Findings {
			if f.File != "catalog.yaml" || f.Line < 1 || f.Column < 1 {
				t.Fatalf("finding without a position: %+v", f)
			}
		}
		// A baseline of the result accepts all of it.
		var buf bytes.Buffer
		if err := ires.Baseline().Write(&buf); err != nil {
			t.Fatal(err)
		}
		b, err := ReadBaseline(&buf)
		if err != nil {
			t.Fatalf("ReadBaseline(Write) error = %v", err)
		}
		ires.ApplyBaseline(b)
		for _, f := range ires.Findings {
			if Ignorable(f.Code) {
				t.Fatalf("baselined finding still reported: %+v", f)
			}
		}
	})
}

// codeSet is the set of rule codes of res's findings.
func codeSet(res *Result) string {
	seen := map[string]bool{}
	var codes []string
	for _, f := range res.Findings {
		if !seen[f.Code] {
			seen[f.Code] = true
			codes = append(codes, f.Code)
		}
	}
	slices.Sort(codes)
	return strings.Join(codes, ",")
}

// FuzzReadBaselineConfig feeds arbitrary bytes to the baseline and
// configuration readers: an error or a value, never a panic, and a
// baseline read back writes what it read.
func FuzzReadBaselineConfig(f *testing.F) {
	f.Add([]byte(`{"opmValidateBaseline":1,"findings":[{"code":"schema","package":"p","element":"properties[\"olm.gvk\"]"}]}`))
	f.Add([]byte("strict: true\nwarnAsError: [schema]\nignore: [edge-target-missing]\nbaseline: b.json\n"))
	f.Add([]byte(`{"opmValidateBaseline":2}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		_, _ = ParseConfig(data, ConfigFile)
		b, err := ReadBaseline(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := b.Write(&buf); err != nil {
			t.Fatal(err)
		}
		b2, err := ReadBaseline(&buf)
		if err != nil || b2.Len() != b.Len() {
			t.Fatalf("round trip: %v, %d records, want %d", err, b2.Len(), b.Len())
		}
	})
}
