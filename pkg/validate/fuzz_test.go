package validate

import (
	"context"
	"path/filepath"
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
	})
}
