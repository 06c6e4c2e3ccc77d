package serve

import (
	"encoding/base64"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func objectValue(s string) []byte {
	v, _ := json.Marshal(map[string]string{"data": base64.StdEncoding.EncodeToString([]byte(s))})
	return v
}

func TestAppendBundleObject(t *testing.T) {
	for _, tc := range []struct {
		value []byte
		want  string
		ok    bool
	}{
		{objectValue("{\n \"kind\": \"X\", \"n\": 1.0}"), "{\n \"kind\": \"X\", \"n\": 1.0}", true},
		{objectValue("  \t{\"a\":1}"), "  \t{\"a\":1}", true},
		{objectValue("kind: X\nd: \"<&>\"\nnum: 1.0\n"), `{"d":"\u003c\u0026\u003e","kind":"X","num":1}`, true},
		{objectValue(""), "null", true},
		{[]byte(`{"data":"e30="}`), "{}", true},
		{[]byte(`{"data": "e30="}`), "{}", true},     // not the compact form: encoding/json decodes it
		{[]byte(`{"data":"e3\u0030="}`), "{}", true}, // an escape: encoding/json too
		{[]byte(`{"data":null}`), "null", true},
		{[]byte(`{"data":"%%%"}`), "", false},
		{[]byte(`{"data":1}`), "", false},
		{[]byte(`[]`), "", false},
	} {
		out, ok, err := appendBundleObject([]byte("prefix"), tc.value)
		if err != nil || ok != tc.ok {
			t.Errorf("%s: ok %v, err %v", tc.value, ok, err)
			continue
		}
		if !ok {
			if string(out) != "prefix" {
				t.Errorf("%s: a failed decode changed the buffer: %q", tc.value, out)
			}
			continue
		}
		objs, err := parseObjects(out[len("prefix"):])
		if err != nil || len(objs) != 1 || objs[0] != tc.want {
			t.Errorf("%s: %q %v, want %q", tc.value, objs, err, tc.want)
		}
	}
	if _, ok, err := appendBundleObject(nil, objectValue("a: [\n")); !ok || err == nil || !strings.Contains(err.Error(), "error converting YAML to JSON") {
		t.Errorf("bad YAML: %v %v", ok, err)
	}

	var buf []byte
	for _, s := range []string{`{"kind":"A"}`, "kind: B\n", `{"kind":"C"}`} {
		buf, _, _ = appendBundleObject(buf, objectValue(s))
	}
	objs, err := parseObjects(buf)
	if err != nil || !slices.Equal(objs, []string{`{"kind":"A"}`, `{"kind":"B"}`, `{"kind":"C"}`}) {
		t.Errorf("list: %q %v", objs, err)
	}
	if _, err := parseObjects(buf[:len(buf)-1]); err == nil {
		t.Error("a truncated list decodes")
	}
}

func TestFirstCSV(t *testing.T) {
	for _, tc := range []struct {
		objs []string
		want int
	}{
		{nil, -1},
		{[]string{`{"kind":"CustomResourceDefinition"}`, `{"apiVersion":"v1","kind":"ClusterServiceVersion","spec":{"kind":"x"}}`}, 1},
		{[]string{`{"spec":{"kind":"ClusterServiceVersion"}}`}, -1},
		{[]string{`{"kind":"ClusterServiceVersion",}`, `{"kind":"ClusterServiceVersion"}`}, 1}, // the first does not parse
		{[]string{`{"kind":"clusterserviceversion"}`}, -1},
		{[]string{`{"kind":"Clust\u0065rServiceVersion"}`}, 0},
		{[]string{`{"kind":"ClusterServiceVersion","kind":"Other"}`}, -1},
		{[]string{`{"a":"}\"{","kind":"ClusterServiceVersion"}`}, 0},
	} {
		if got := firstCSV(tc.objs); got != tc.want {
			t.Errorf("%q: %d, want %d", tc.objs, got, tc.want)
		}
	}
}

func FuzzTopLevelString(f *testing.F) {
	f.Add([]byte(`{"kind":"ClusterServiceVersion","a":[1,{"kind":"x"}]}`), "kind")
	f.Add([]byte(`{"a\"":"\\","kind":1}`), "kind")
	f.Fuzz(func(t *testing.T, obj []byte, key string) {
		got, ok := topLevelString(obj, key)
		var m map[string]json.RawMessage
		if json.Unmarshal(obj, &m) != nil {
			return
		}
		// On valid JSON, agree with encoding/json (which keeps the last of
		// repeated keys, as topLevelString does; it folds case, which
		// topLevelString does not, so only check exact keys).
		raw, found := m[key]
		var s string
		want := found && json.Unmarshal(raw, &s) == nil
		if ok && got != s {
			t.Fatalf("%s: %q, encoding/json says %q", obj, got, s)
		}
		if ok && !want {
			t.Fatalf("%s: found %q, encoding/json finds no string", obj, got)
		}
	})
}

func FuzzParseObjects(f *testing.F) {
	buf, _, _ := appendBundleObject(nil, objectValue(`{"kind":"A"}`))
	f.Add(buf)
	f.Add([]byte{0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		objs, err := parseObjects(data)
		if err != nil {
			return
		}
		n := 0
		for _, o := range objs {
			n += 4 + len(o)
		}
		if n != len(data) {
			t.Fatalf("%d bytes decoded from %d", n, len(data))
		}
	})
}

func FuzzAppendBundleObject(f *testing.F) {
	f.Add([]byte(`{"data":"e30="}`))
	f.Add(objectValue("kind: X\n"))
	f.Fuzz(func(t *testing.T, value []byte) {
		out, ok, err := appendBundleObject(nil, value)
		if !ok || err != nil {
			return
		}
		objs, perr := parseObjects(out)
		if perr != nil || len(objs) != 1 {
			t.Fatalf("%q: appended %q, which does not parse back (%v)", value, out, perr)
		}
	})
}
