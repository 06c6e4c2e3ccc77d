package jsoncache

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestConformance writes the cache of every catalog of the conformance
// suite's serve/ cases that upstream serves, checks its digest, and
// answers the recorded calls that read the cache's files (GetPackage,
// GetBundle, GetBundleForChannel, ListBundles, ListPackages and the custom
// schema listing) from the files alone, as upstream's JSON backend does
// (../shared/docs/serve-cache.md §9): the answers must be upstream's
// recorded ones. ListBundles covers every bundle file.
func TestConformance(t *testing.T) {
	suite := filepath.Join("..", "..", "..", "..", "shared", "conformance")
	if d := os.Getenv("OPM_CONFORMANCE_DIR"); d != "" {
		suite = d
	}
	cases, _ := filepath.Glob(filepath.Join(suite, "serve", "*"))
	if len(cases) == 0 {
		t.Skipf("conformance suite not found at %s: skipping", suite)
	}
	for _, c := range cases {
		if st, err := os.Stat(c); err != nil || !st.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(c, "startup.json")); err == nil {
			continue // upstream refuses to serve it
		}
		t.Run(filepath.Base(c), func(t *testing.T) {
			if filepath.Base(c) == "community-operators-prod-v4.20" && (testing.Short() || raceEnabled && os.Getenv("OPM_E2E_ALL") == "") {
				t.Skip("skipping the largest catalog with -short or under the race detector; run without them, or with OPM_E2E_ALL=1, to include it")
			}
			input := filepath.Join(c, "input")
			if ref, err := os.ReadFile(filepath.Join(c, "input.ref")); err == nil {
				input = filepath.Join(suite, strings.TrimSpace(string(ref)), "input")
			}
			dir := filepath.Join(t.TempDir(), "cache")
			if _, err := Write(context.Background(), build(t, input), input, dir, Options{}); err != nil {
				t.Fatal(err)
			}
			if err := Check(context.Background(), input, dir); err != nil {
				t.Fatal(err)
			}
			r := newReader(t, filepath.Join(dir, CacheSubdir))
			files, _ := filepath.Glob(filepath.Join(c, "calls", "*.json"))
			replayed := 0
			for _, f := range files {
				var call recordedCall
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(data, &call); err != nil {
					t.Fatal(err)
				}
				got, msg, ok := r.answer(t, call)
				if !ok {
					continue
				}
				replayed++
				wantCode := "OK"
				if msg != "" {
					wantCode = "Unknown"
				}
				if call.Code != wantCode || call.Message != msg {
					t.Errorf("%s %s %s: %s %q, recorded %s %q", filepath.Base(f), call.Method, call.Request, wantCode, msg, call.Code, call.Message)
					continue
				}
				if !sameAnswers(t, got, call.Response, call.Ordered) {
					t.Errorf("%s %s %s: the cache's answer differs from upstream's", filepath.Base(f), call.Method, call.Request)
				}
			}
			if replayed == 0 {
				t.Fatal("no recorded call read the cache")
			}
			t.Logf("%d recorded calls answered from the cache", replayed)
		})
	}
}

type recordedCall struct {
	Method   string            `json:"method"`
	Request  json.RawMessage   `json:"request"`
	Headers  []string          `json:"headers"`
	Code     string            `json:"code"`
	Message  string            `json:"message"`
	Response []json.RawMessage `json:"response"`
	Ordered  bool              `json:"ordered"`
}

// reader answers from a JSON cache's files, as upstream's JSON backend.
type reader struct {
	dir  string
	pkgs map[string]pkgJSON
}

func newReader(t *testing.T, dir string) *reader {
	r := &reader{dir: dir}
	if err := json.Unmarshal([]byte(read(t, filepath.Join(dir, "packages.json"))), &r.pkgs); err != nil {
		t.Fatal(err)
	}
	return r
}

func (r *reader) bundle(t *testing.T, pkg, ch, name string, trim bool) map[string]any {
	var b map[string]any
	if err := json.Unmarshal([]byte(read(t, filepath.Join(r.dir, pkg+"_"+ch+"_"+name+".json"))), &b); err != nil {
		t.Fatal(err)
	}
	if trim {
		delete(b, "replaces")
		delete(b, "skips")
	}
	return b
}

// answer returns the messages and the error message of the call, and
// false for calls it does not answer.
func (r *reader) answer(t *testing.T, c recordedCall) ([]any, string, bool) {
	var req map[string]string
	_ = json.Unmarshal(c.Request, &req)
	switch c.Method {
	case "api.Registry/ListPackages":
		var out []any
		for name := range r.pkgs {
			out = append(out, map[string]any{"name": name})
		}
		return out, "", true
	case "api.Registry/GetPackage":
		p, ok := r.pkgs[req["name"]]
		if !ok {
			return nil, fmt.Sprintf("package %q not found", req["name"]), true
		}
		out := map[string]any{"name": p.Name}
		if p.DefaultChannel != "" {
			out["defaultChannelName"] = p.DefaultChannel
		}
		if p.Deprecation != nil {
			out["deprecation"] = deprecationAny(p.Deprecation)
		}
		var chs []any
		for _, name := range slices.Sorted(mapsKeys(p.Channels)) {
			ch := p.Channels[name]
			m := map[string]any{"name": ch.Name, "csvName": ch.Head}
			if ch.Deprecation != nil {
				m["deprecation"] = deprecationAny(ch.Deprecation)
			}
			chs = append(chs, m)
		}
		if len(chs) > 0 {
			out["channels"] = chs
		}
		return []any{out}, "", true
	case "api.Registry/GetBundle", "api.Registry/GetBundleForChannel":
		p, ok := r.pkgs[req["pkgName"]]
		if !ok {
			return nil, fmt.Sprintf("package %q not found", req["pkgName"]), true
		}
		ch, ok := p.Channels[req["channelName"]]
		if !ok {
			return nil, fmt.Sprintf("package %q, channel %q not found", req["pkgName"], req["channelName"]), true
		}
		name := ch.Head
		if c.Method == "api.Registry/GetBundle" {
			name = req["csvName"]
			if _, ok := ch.Bundles[name]; !ok {
				return nil, fmt.Sprintf("package %q, channel %q, bundle %q not found", req["pkgName"], req["channelName"], name), true
			}
		}
		return []any{r.bundle(t, p.Name, ch.Name, name, true)}, "", true
	case "api.Registry/ListBundles":
		type key struct{ pkg, ch, name string }
		var keys []key
		for _, p := range r.pkgs {
			for _, ch := range p.Channels {
				for name := range ch.Bundles {
					keys = append(keys, key{p.Name, ch.Name, name})
				}
			}
		}
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			if a.ch != b.ch {
				return a.ch < b.ch
			}
			if a.pkg != b.pkg {
				return a.pkg < b.pkg
			}
			return a.name < b.name
		})
		var out []any
		for _, k := range keys {
			b := r.bundle(t, k.pkg, k.ch, k.name, false)
			if b["bundlePath"] != nil {
				delete(b, "csvJson")
				delete(b, "object")
			}
			out = append(out, b)
		}
		return out, "", true
	case "api.ExperimentalRegistry/ExperimentalListPackageCustomSchemas":
		if !slices.Contains(c.Headers, "x-acknowledge-experimental: true") || req["schema"] == "" || strings.ContainsAny(req["schema"]+req["packageName"], "/.") {
			return nil, "", false // answered before the files are read
		}
		files, _ := filepath.Glob(filepath.Join(r.dir, "metas", req["schema"], req["packageName"], "*.json"))
		var out []any
		for _, f := range files {
			var v any
			if err := json.Unmarshal([]byte(read(t, f)), &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
		return out, "", true
	}
	return nil, "", false
}

func deprecationAny(d *deprecationJSON) map[string]any {
	if d.Message == "" {
		return map[string]any{}
	}
	return map[string]any{"message": d.Message}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// sameAnswers compares answers with the recorded proto3 JSON messages, as
// parsed JSON, in order or as multisets.
func sameAnswers(t *testing.T, got []any, want []json.RawMessage, ordered bool) bool {
	canon := func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	var g, w []string
	for _, v := range got {
		// Through JSON again, so that numbers and nested values compare
		// alike.
		var n any
		if err := json.Unmarshal([]byte(canon(v)), &n); err != nil {
			t.Fatal(err)
		}
		g = append(g, canon(n))
	}
	for _, raw := range want {
		var n any
		if err := json.Unmarshal(raw, &n); err != nil {
			t.Fatal(err)
		}
		w = append(w, canon(n))
	}
	if !ordered {
		slices.Sort(g)
		slices.Sort(w)
	}
	if !reflect.DeepEqual(g, w) {
		for i := range min(len(g), len(w)) {
			if g[i] != w[i] {
				t.Logf("first difference, message %d:\ncache:    %.600s\nupstream: %.600s", i, g[i], w[i])
				break
			}
		}
		if len(g) != len(w) {
			t.Logf("%d messages, upstream %d", len(g), len(w))
		}
		return false
	}
	return true
}
