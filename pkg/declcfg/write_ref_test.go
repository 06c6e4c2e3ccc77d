package declcfg

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/property"
)

// The JSON writer is hand-written for speed and must match upstream byte
// for byte. Upstream writes each blob with encoding/json:
//
//	enc := json.NewEncoder(w)
//	enc.SetIndent("", "    ")
//	enc.SetEscapeHTML(false)
//	enc.Encode(blob)
//
// and our blob types carry upstream's field order and tags, so that is
// the reference: refEncode below. The tests here compare the writer with
// it blob by blob: on every conformance catalog, on blobs with every field
// set (so a field added to a type fails until the writer writes it), and
// under fuzzing.

// refEncode is upstream's encoding of one blob.
func refEncode(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "    ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// ourEncode is WriteJSON's encoding of one blob.
func ourEncode(v any) []byte {
	out := appendIndent(nil, appendBlob(nil, v), nil)
	return append(out, '\n')
}

// compareBlobs checks every blob of cfg, in writing order, against the
// reference, and returns how many it checked.
func compareBlobs(t *testing.T, what string, cfg DeclarativeConfig) int {
	t.Helper()
	n := 0
	err := walkOrdered(cfg, func(v any) error {
		n++
		want, err := refEncode(v)
		if err != nil {
			return fmt.Errorf("encoding/json on blob %d (%T): %w", n, v, err)
		}
		if got := ourEncode(v); !bytes.Equal(got, want) {
			return fmt.Errorf("blob %d (%T) differs from encoding/json at %s", n, v, diffAt(got, want))
		}
		return nil
	})
	if err != nil {
		t.Errorf("%s: %v", what, err)
	}
	return n
}

func diffAt(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	clip := func(b []byte) string { return fmt.Sprintf("%q", b[max(0, i-30):min(len(b), i+30)]) }
	return fmt.Sprintf("byte %d: got %s, want %s", i, clip(got), clip(want))
}

// TestWriteJSONReferenceConformance compares the writer with encoding/json
// on every blob of every catalog in the shared conformance suite.
func TestWriteJSONReferenceConformance(t *testing.T) {
	const suite = "../../../shared/conformance"
	var dirs []string
	for _, group := range []string{"catalog", "invalid"} {
		m, _ := filepath.Glob(filepath.Join(suite, group, "*", "input"))
		dirs = append(dirs, m...)
	}
	if len(dirs) == 0 {
		t.Skipf("conformance suite not found at %s", suite)
	}
	total := 0
	for _, dir := range dirs {
		cfg, err := LoadDir(context.Background(), dir)
		if err != nil {
			continue // invalid cases that do not load have no blobs to write
		}
		total += compareBlobs(t, dir, *cfg)
	}
	t.Logf("%d blobs of %d catalogs match encoding/json", total, len(dirs))
	if total == 0 {
		t.Error("no blob was compared")
	}
}

// filled returns a value of type typ with every JSON field set (strings
// named after their field, one element per slice, raw JSON values that
// need compacting and escaping), so that a field the writer leaves out
// shows up as a difference.
func filled(t *testing.T, typ reflect.Type, path string) reflect.Value {
	t.Helper()
	rawType := reflect.TypeFor[json.RawMessage]()
	switch {
	case typ == rawType:
		return reflect.ValueOf(json.RawMessage(`{ "z": [1, 2.50, "<&>"], "a": {"k": null} }`))
	case typ.Kind() == reflect.String:
		return reflect.ValueOf(path + " <&> \u2028 \"q\"").Convert(typ)
	case typ.Kind() == reflect.Slice && typ.Elem().Kind() == reflect.Uint8:
		return reflect.ValueOf([]byte("\x89PNG " + path)).Convert(typ)
	case typ.Kind() == reflect.Slice:
		s := reflect.MakeSlice(typ, 0, 2)
		s = reflect.Append(s, filled(t, typ.Elem(), path+"[0]"))
		return s
	case typ.Kind() == reflect.Pointer:
		p := reflect.New(typ.Elem())
		p.Elem().Set(filled(t, typ.Elem(), path))
		return p
	case typ.Kind() == reflect.Struct:
		v := reflect.New(typ).Elem()
		for i := range typ.NumField() {
			f := typ.Field(i)
			if !f.IsExported() || f.Tag.Get("json") == "-" {
				continue
			}
			v.Field(i).Set(filled(t, f.Type, path+"."+f.Name))
		}
		return v
	}
	t.Fatalf("%s: cannot fill a %s; teach filled (and the writer) about it", path, typ)
	return reflect.Value{}
}

// TestWriteJSONEveryField writes blobs of every type with every field set,
// and with every optional field empty, and compares them with
// encoding/json. A field added to a blob type (or to property.Property)
// fails here until appendBlob writes it as encoding/json does.
func TestWriteJSONEveryField(t *testing.T) {
	full := DeclarativeConfig{
		Packages:     []Package{filled(t, reflect.TypeFor[Package](), "package").Interface().(Package)},
		Channels:     []Channel{filled(t, reflect.TypeFor[Channel](), "channel").Interface().(Channel)},
		Bundles:      []Bundle{filled(t, reflect.TypeFor[Bundle](), "bundle").Interface().(Bundle)},
		Deprecations: []Deprecation{filled(t, reflect.TypeFor[Deprecation](), "deprecation").Interface().(Deprecation)},
	}
	// Writing groups blobs by package: put them all in one.
	full.Channels[0].Package = full.Packages[0].Name
	full.Bundles[0].Package = full.Packages[0].Name
	full.Deprecations[0].Package = full.Packages[0].Name
	if n := compareBlobs(t, "every field set", full); n != 4 {
		t.Errorf("compared %d blobs, want 4", n)
	}

	empty := DeclarativeConfig{
		Packages:     []Package{{Schema: SchemaPackage, Name: "p", Icon: &Icon{}}},
		Channels:     []Channel{{Schema: SchemaChannel, Package: "p", Entries: []ChannelEntry{{}}}},
		Bundles:      []Bundle{{Schema: SchemaBundle, Package: "p", Properties: []property.Property{{}}}},
		Deprecations: []Deprecation{{Schema: SchemaDeprecations, Package: "p", Entries: []DeprecationEntry{{}}}},
	}
	compareBlobs(t, "optional fields empty", empty)
}

// FuzzWriteJSON compares the writer with encoding/json on blobs built from
// fuzzed strings and property values.
func FuzzWriteJSON(f *testing.F) {
	f.Add("foo", "stable", "<b>desc</b>\n\u2028", "foo.v0.1.0", ">=0.1.0 <0.2.0", []byte(`{"packageName":"foo","version":"0.1.0"}`), []byte("\x89PNG"))
	f.Add("", "", "", "", "", []byte(`[ 1.0, 1e3, -0, "\u00e9\ud83d\ude00" ]`), []byte(nil))
	f.Add("a\"b\\c", "\x00\x1f", "\t\r", "é", "\xff", []byte(` "\u003c" `), []byte{})
	f.Fuzz(func(t *testing.T, name, channel, text, bundle, skipRange string, value, icon []byte) {
		if !json.Valid(value) {
			value = nil // encoding/json refuses invalid raw values; the loader never produces them
		}
		props := []property.Property{{Type: text, Value: value}}
		cfg := DeclarativeConfig{
			Packages: []Package{{Schema: SchemaPackage, Name: name, DefaultChannel: channel, Description: text,
				Icon: &Icon{Data: icon, MediaType: text}, Properties: props}},
			Channels: []Channel{{Schema: SchemaChannel, Name: channel, Package: name, Properties: props,
				Entries: []ChannelEntry{{Name: bundle, Replaces: text, Skips: []string{text, ""}, SkipRange: skipRange}}}},
			Bundles: []Bundle{{Schema: SchemaBundle, Name: bundle, Package: name, Image: text, Properties: props,
				RelatedImages: []RelatedImage{{Name: text, Image: skipRange}}}},
			Deprecations: []Deprecation{{Schema: SchemaDeprecations, Package: name,
				Entries: []DeprecationEntry{{Reference: PackageScopedReference{Schema: text, Name: bundle}, Message: text}}}},
		}
		var msgs []string
		err := walkOrdered(cfg, func(v any) error {
			want, err := refEncode(v)
			if err != nil {
				return nil // not encodable by upstream either
			}
			if got := ourEncode(v); !bytes.Equal(got, want) {
				msgs = append(msgs, fmt.Sprintf("%T differs at %s", v, diffAt(got, want)))
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(msgs) > 0 {
			t.Error(strings.Join(msgs, "\n"))
		}
	})
}
