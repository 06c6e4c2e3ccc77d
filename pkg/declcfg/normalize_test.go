package declcfg

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
)

func TestNormalize(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"Success/SortedKeys", `{"schema":"x","b":1,"a":2}`, `{"a":2,"b":1,"schema":"x"}`},
		{"Success/Nested", `{"schema":"x","o":{"z":[{"b":1,"a":null}],"a":true}}`, `{"o":{"a":true,"z":[{"a":null,"b":1}]},"schema":"x"}`},
		{"Success/Numbers", `{"schema":"x","a":1.0,"b":1e3,"c":12345678901234567890,"d":-0,"e":1e-7,"f":1e21,"g":0.5}`,
			`{"a":1,"b":1000,"c":12345678901234567000,"d":-0,"e":1e-7,"f":1e+21,"g":0.5,"schema":"x"}`},
		{"Success/NoHTMLEscape", `{"schema":"x","a":"\u003c\u0026\u003e"}`, `{"a":"<&>","schema":"x"}`},
		{"Success/Escapes", `{"schema":"x","a":"\/\b\f\n\r\t\u0001\u2028é"}`, `{"a":"/\b\f\n\r\t\u0001\u2028é","schema":"x"}`},
		{"Success/DuplicateLastWins", `{"schema":"x","a":1,"a":2}`, `{"a":2,"schema":"x"}`},
		{"Success/Whitespace", " {\n \"schema\" : \"x\" ,\n\t\"a\" : [ 1 , 2 ] }\n", `{"a":[1,2],"schema":"x"}`},
		{"Success/EmptyContainers", `{"schema":"x","a":{},"b":[]}`, `{"a":{},"b":[],"schema":"x"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := normalizeValue([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(n.blob) != tc.want {
				t.Errorf("got  %s\nwant %s", n.blob, tc.want)
			}
			s, err := normalizeSlow([]byte(tc.in))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.blob, n.blob) {
				t.Errorf("fast and slow paths differ:\nfast %s\nslow %s", n.blob, s.blob)
			}
		})
	}
}

func TestNormalizeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, in, want string
	}{
		{"Error/CaseDuplicate", `{"Schema":"a","schema":"b"}`, `duplicate keys for key "schema": [Schema schema]`},
		{"Error/NonStringSchema", `{"schema":5}`, `expected value for key "schema" to be a string, got number 5`},
		{"Error/NotAnObject", `"not fbc"`, "json: cannot unmarshal string into Go value of type map[string]interface {} at offset 9 (indicated by <==)\n \"not fbc\" <== "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := normalizeValue([]byte(tc.in))
			if err == nil || err.Error() != tc.want {
				t.Errorf("got %v\nwant %s", err, tc.want)
			}
		})
	}
}

// FuzzNormalize checks that the fast path, whenever it accepts an input,
// produces exactly what upstream's algorithm (the slow path) produces.
func FuzzNormalize(f *testing.F) {
	for _, s := range []string{
		`{"schema":"olm.package","name":"foo"}`,
		`{"a":[1,2.5,-3e-9,{"b":"\u003c"}],"schema":"x","c":null,"d":true}`,
		`{"schema":"x","k":"é\u2029\ud800"}`,
		`{"b":1,"a":1,"a":{"z":1,"y":2}}`,
		`{"name":"a","Name":"b"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		fast, ferr := normalizeFast(in)
		slow, serr := normalizeSlow(in)
		if ferr != nil {
			return
		}
		if serr != nil {
			t.Fatalf("fast path accepted what upstream rejects (%v): %q", serr, in)
		}
		if !bytes.Equal(fast.blob, slow.blob) || fast.schema != slow.schema || fast.pkg != slow.pkg || fast.name != slow.name {
			t.Fatalf("fast %q (%q %q %q) != slow %q (%q %q %q) for %q", fast.blob, fast.schema, fast.pkg, fast.name, slow.blob, slow.schema, slow.pkg, slow.name, in)
		}
	})
}

// FuzzBundleDecode checks that the direct bundle decoder, whenever it
// accepts a blob, agrees with encoding/json.
func FuzzBundleDecode(f *testing.F) {
	for _, s := range []string{
		`{"schema":"olm.bundle","name":"a","package":"p","image":"i","properties":[{"type":"olm.package","value":{"packageName":"p","version":"1.0.0"}}],"relatedImages":[{"name":"","image":"x"}]}`,
		`{"schema":"olm.bundle","Image":"x","image":"y","properties":[]}`,
		`{"schema":"olm.bundle","properties":null,"relatedImages":[{"image":"a\u003cb"}],"extra":{"a":[1]}}`,
		`{"schema":"olm.bundle","properties":[{"type":"t","value":null,"Value":1}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		n, err := normalizeFast(in)
		if err != nil {
			return
		}
		var fast, slow Bundle
		if !decodeBundleFast(n.blob, n.top, &fast) {
			return
		}
		if err := json.Unmarshal(n.blob, &slow); err != nil {
			t.Fatalf("fast decoder accepted what encoding/json rejects (%v): %s", err, n.blob)
		}
		if !reflect.DeepEqual(normalizeBundle(fast), normalizeBundle(slow)) {
			t.Fatalf("fast %+v\nslow %+v\nblob %s", fast, slow, n.blob)
		}
	})
}

// normalizeBundle maps a "null" RawMessage to nil: both encode as null.
func normalizeBundle(b Bundle) Bundle {
	for i := range b.Properties {
		if string(b.Properties[i].Value) == "null" {
			b.Properties[i].Value = nil
		}
	}
	return b
}

func TestPlainASCII(t *testing.T) {
	for i := 0; i < 256; i++ {
		c := byte(i)
		want := c >= 0x20 && c < 0x80 && c != '\\'
		for _, pos := range []int{0, 3, 7, 8, 12, 16} {
			b := []byte("abcdefghijklmnopq")
			b[pos] = c
			if got := plainASCII(b); got != want {
				t.Fatalf("plainASCII with %#x at %d = %v, want %v", c, pos, got, want)
			}
		}
	}
}
