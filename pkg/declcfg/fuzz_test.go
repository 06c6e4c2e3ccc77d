package declcfg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/opmkit/opm/internal/yamlorjson"
	"github.com/opmkit/opm/pkg/property"
)

// FuzzLoadFS loads a small directory of arbitrary files (an .indexignore
// among them): the result must not depend on how many files are parsed at
// once, and every failure must be a *LoadError naming one of the files.
func FuzzLoadFS(f *testing.F) {
	f.Add([]byte("schema: olm.package\nname: a\n"), []byte(`{"schema":"olm.channel","package":"a","name":"c"}`), []byte("*.md\n"), []byte("not fbc"))
	f.Add([]byte("---\n---\n"), []byte("{\"schema\":\"x\"}\n---\n"), []byte("c.json\n!c.json"), []byte("schema: y"))
	f.Add([]byte("schema: olm.bundle\nimage: 5\n"), []byte("[[[["), []byte("b/"), []byte(""))
	f.Fuzz(func(t *testing.T, a, c, ignore, md []byte) {
		fsys := fstest.MapFS{
			"a.yaml":         {Data: a},
			"b/c.json":       {Data: c},
			"b/.indexignore": {Data: ignore},
			"b/d/README.md":  {Data: md},
		}
		load := func(n int) (string, error) {
			cfg, err := LoadFS(context.Background(), fsys, WithConcurrency(n))
			if err != nil {
				return "", err
			}
			var buf bytes.Buffer
			if err := WriteJSON(*cfg, &buf); err != nil {
				t.Fatalf("write: %v", err)
			}
			return buf.String(), nil
		}
		one, err1 := load(1)
		four, err4 := load(4)
		if (err1 == nil) != (err4 == nil) || one != four || (err1 != nil && err1.Error() != err4.Error()) {
			t.Fatalf("concurrency changes the result:\n1: %q %v\n4: %q %v", one, err1, four, err4)
		}
		if err1 != nil {
			var le *LoadError
			if !errors.As(err1, &le) {
				t.Fatalf("error %T %v is not a *LoadError", err1, err1)
			}
			switch le.Pos.File {
			case "a.yaml", "b/c.json", "b/d/README.md":
			default:
				t.Fatalf("error %v names no file", err1)
			}
		}
	})
}

// FuzzLoadObjects decodes arbitrary olm.bundle.object values: no panic,
// an error is worded as upstream's loader words it and agrees with the
// loader's check (see there), and an object that decodes is its data as written (JSON)
// or converted (YAML).
func FuzzLoadObjects(f *testing.F) {
	f.Add([]byte(`{"data":"eyJraW5kIjoiQ2x1c3RlclNlcnZpY2VWZXJzaW9uIn0="}`))
	f.Add([]byte(`{"data":"!!"}`))
	f.Add([]byte(`null`))
	f.Add([]byte(``))
	f.Add([]byte(`{"data":"a2luZDogWwo="}`))
	f.Fuzz(func(t *testing.T, value []byte) {
		b := Bundle{Properties: []property.Property{{Type: property.TypeBundleObject, Value: value}}}
		checkErr := checkBundleObjects(&b)
		if err := b.LoadObjects(); err != nil {
			if !strings.HasPrefix(err.Error(), "read bundle objects: ") {
				t.Fatalf("error %v", err)
			}
			// The loader's check leaves base64 past the start of a JSON
			// manifest to LoadObjects; it agrees on everything else.
			if checkErr != nil && checkErr.Error() != err.Error() ||
				checkErr == nil && !strings.Contains(err.Error(), ": parse property at index 0 as bundle object: illegal base64 data") {
				t.Fatalf("LoadObjects: %v; the loader's check: %v", err, checkErr)
			}
			return
		}
		if checkErr != nil {
			t.Fatalf("LoadObjects accepted %q, the loader's check says %v", value, checkErr)
		}
		if len(b.Objects) != 1 {
			t.Fatalf("%d objects", len(b.Objects))
		}
		var v struct {
			Data []byte `json:"data"`
		}
		if err := json.Unmarshal(value, &v); err != nil {
			t.Fatalf("LoadObjects accepted %q: %v", value, err)
		}
		if yamlorjson.HasJSONPrefix(v.Data) {
			if string(v.Data) != b.Objects[0] {
				t.Fatalf("object %q is not the data of %q", b.Objects[0], value)
			}
		} else if !json.Valid([]byte(b.Objects[0])) {
			t.Fatalf("object %q converted from %q is not JSON", b.Objects[0], value)
		}
	})
}
