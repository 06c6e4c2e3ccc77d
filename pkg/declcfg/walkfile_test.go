package declcfg

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"testing"
)

const walkSample = `---
schema: olm.package
name: foo
defaultChannel: stable
---
schema: olm.channel
package: foo
name: stable
entries: [{name: foo.v1}]
---
schema: olm.bundle
package: foo
name: foo.v1
image: quay.io/foo:v1
properties:
- {type: olm.package, value: {packageName: foo, version: 1.0.0}}
- {type: x.y, value: {z: 1.0, html: "<a>&"}}
---
schema: olm.deprecations
package: foo
entries: [{reference: {schema: olm.package}, message: gone}]
---
schema: example.custom
package: foo
count: 1e3
`

// walkAll collects what WalkFile hands out as a DeclarativeConfig, plus
// the blobs.
func walkAll(data []byte, name string) (*DeclarativeConfig, []Meta, error) {
	cfg := &DeclarativeConfig{}
	var metas []Meta
	err := WalkFile(data, name, func(b Blob) error {
		metas = append(metas, b.Meta)
		n := 0
		if b.Package != nil {
			cfg.Packages = append(cfg.Packages, *b.Package)
			n++
		}
		if b.Channel != nil {
			cfg.Channels = append(cfg.Channels, *b.Channel)
			n++
		}
		if b.Bundle != nil {
			cfg.Bundles = append(cfg.Bundles, *b.Bundle)
			n++
		}
		if b.Deprecation != nil {
			cfg.Deprecations = append(cfg.Deprecations, *b.Deprecation)
			n++
		}
		if n == 0 {
			cfg.Others = append(cfg.Others, b.Meta)
		} else if n > 1 {
			return errors.New("more than one typed form")
		}
		return nil
	})
	return cfg, metas, err
}

func TestWalkFileMatchesLoader(t *testing.T) {
	for _, data := range []string{walkSample, `{"schema":"olm.package","name":"a"} {"schema":"x","package":"a","v":[1.50]}`} {
		want, err := LoadReader(bytes.NewReader([]byte(data)), "f.yaml")
		if err != nil {
			t.Fatal(err)
		}
		got, metas, err := walkAll([]byte(data), "f.yaml")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("WalkFile gave\n%+v\nthe loader\n%+v", got, want)
		}
		for _, m := range metas {
			var v any
			if err := json.Unmarshal(m.Blob, &v); err != nil {
				t.Errorf("blob %s is not JSON: %v", m.Blob, err)
			}
			if m.Schema == "" || !m.Pos.IsValid() {
				t.Errorf("meta without schema or position: %+v", m)
			}
		}
	}
	_, metas, _ := walkAll([]byte(walkSample), "f.yaml")
	if got, want := string(metas[2].Blob), `{"image":"quay.io/foo:v1","name":"foo.v1","package":"foo","properties":[{"type":"olm.package","value":{"packageName":"foo","version":"1.0.0"}},{"type":"x.y","value":{"html":"<a>&","z":1}}],"schema":"olm.bundle"}`; got != want {
		t.Errorf("normalised bundle blob:\n got %s\nwant %s", got, want)
	}
	if got := string(metas[4].Blob); got != `{"count":1000,"package":"foo","schema":"example.custom"}` {
		t.Errorf("custom blob %s", got)
	}
}

func TestWalkFileErrors(t *testing.T) {
	for _, data := range []string{"name: no-schema\n", "schema: olm.package\nname: [\n", `{"schema":"olm.package","name":1}`} {
		_, lerr := LoadReader(bytes.NewReader([]byte(data)), "f")
		_, _, werr := walkAll([]byte(data), "f")
		if lerr == nil || werr == nil || lerr.Error() != werr.Error() {
			t.Errorf("%q: loader says %v, WalkFile %v", data, lerr, werr)
		}
	}
	stop := errors.New("stop")
	calls := 0
	err := WalkFile([]byte(walkSample), "f", func(Blob) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Errorf("the callback's error must end the walk: %v after %d calls", err, calls)
	}
}

func FuzzWalkFile(f *testing.F) {
	f.Add([]byte(walkSample))
	f.Add([]byte(`{"schema":"a"}{"schema":"olm.bundle","properties":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		want, lerr := LoadReader(bytes.NewReader(data), "f")
		got, _, werr := walkAll(data, "f")
		if (lerr == nil) != (werr == nil) {
			t.Fatalf("loader error %v, WalkFile error %v", lerr, werr)
		}
		if lerr != nil {
			if lerr.Error() != werr.Error() {
				t.Fatalf("loader error %v, WalkFile error %v", lerr, werr)
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("WalkFile and the loader differ")
		}
	})
}
