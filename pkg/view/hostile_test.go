package view_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// Hostile catalog text: every string below must reach the pages as text.
const (
	scriptDesc = "<script>alert('desc')</script>\n\n**bold** [js](javascript:alert('link')) [ok](https://example.com/ok) " +
		"![img](http://evil.example/x.png) <img src=x onerror=alert('img')> [data](data:text/html,<script>alert(1)</script>)"
	htmlBundle  = `evil.v1.0.0"><img src=x onerror=alert('node')>`
	htmlChannel = `<b>stable</b><script>alert('ch')</script>`
	evilSVG     = `<svg xmlns="http://www.w3.org/2000/svg" onload="alert('svg')" width="10" height="10"><script>alert('svg2')</script><rect width="10" height="10"/></svg>`
	bigChannel  = 10000
	// denseChannel entries all carry skipRange '>=0.0.0': each covers
	// every other, 9 million edges for 3,000 entries (900 KB).
	denseChannel = 3000
)

// writeHostile writes a catalog with script in descriptions, HTML in
// names, a huge icon, a scripted SVG icon, a 10,000-bundle channel and a
// channel of 3,000 entries whose skipRanges cover each other.
func writeHostile(t *testing.T) string { return writeHostileB(t) }

func writeHostileB(t testing.TB) string {
	t.Helper()
	dir := t.TempDir()
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	put := func(v any) {
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
	}
	prop := func(typ string, v any) map[string]any { return map[string]any{"type": typ, "value": v} }
	bundle := func(pkg, name, version string, more ...map[string]any) map[string]any {
		props := append([]map[string]any{prop("olm.package", map[string]any{"packageName": pkg, "version": version})}, more...)
		return map[string]any{"schema": "olm.bundle", "package": pkg, "name": name, "image": "example.com/" + pkg + ":" + version, "properties": props}
	}

	// evil: script and HTML everywhere, an SVG icon that scripts.
	put(map[string]any{"schema": "olm.package", "name": "evil", "defaultChannel": htmlChannel, "description": scriptDesc,
		"icon": map[string]any{"base64data": base64.StdEncoding.EncodeToString([]byte(evilSVG)), "mediatype": "image/svg+xml"}})
	put(map[string]any{"schema": "olm.channel", "package": "evil", "name": htmlChannel, "entries": []map[string]any{
		{"name": "evil.v0.9.0"}, {"name": htmlBundle, "replaces": "evil.v0.9.0", "skips": []string{"<i>gone</i>"}}}})
	csv := map[string]any{"displayName": "<script>alert('dn')</script>Evil", "description": scriptDesc,
		"provider": map[string]any{"name": "<b>ACME</b>"}, "keywords": []string{"<img src=x onerror=alert('kw')>"},
		"links":       []map[string]any{{"name": "bad", "url": "javascript:alert('csvlink')"}, {"name": "good", "url": "https://example.com"}},
		"annotations": map[string]any{"description": "<script>alert('summary')</script>"}}
	put(bundle("evil", "evil.v0.9.0", "0.9.0"))
	put(bundle("evil", htmlBundle, "1.0.0", prop("olm.csv.metadata", csv), prop("<svg onload=alert('ptype')>", map[string]any{"x": "</pre><script>alert('pval')</script>"})))
	put(map[string]any{"schema": "olm.deprecations", "package": "evil", "entries": []map[string]any{
		{"reference": map[string]any{"schema": "olm.bundle", "name": "evil.v0.9.0"}, "message": "<script>alert('dep')</script>"}}})

	// huge-icon: a 2 MiB PNG.
	huge := append([]byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'}, make([]byte, 2<<20)...)
	put(map[string]any{"schema": "olm.package", "name": "huge-icon", "defaultChannel": "stable",
		"icon": map[string]any{"base64data": base64.StdEncoding.EncodeToString(huge), "mediatype": "image/png"}})
	put(map[string]any{"schema": "olm.channel", "package": "huge-icon", "name": "stable", "entries": []map[string]any{{"name": "huge-icon.v1.0.0"}}})
	put(bundle("huge-icon", "huge-icon.v1.0.0", "1.0.0"))

	// big: one channel of 10,000 bundles, each replacing the one before
	// and the newest with a skipRange.
	entries := make([]map[string]any, 0, bigChannel)
	for i := 0; i < bigChannel; i++ {
		e := map[string]any{"name": fmt.Sprintf("big.v1.%d.0", i)}
		if i > 0 {
			e["replaces"] = fmt.Sprintf("big.v1.%d.0", i-1)
		}
		if i%100 == 99 {
			e["skipRange"] = fmt.Sprintf(">=1.%d.0 <1.%d.0", i-20, i)
		}
		entries = append(entries, e)
	}
	put(map[string]any{"schema": "olm.package", "name": "big", "defaultChannel": "stable"})
	put(map[string]any{"schema": "olm.channel", "package": "big", "name": "stable", "entries": entries})
	for i := 0; i < bigChannel; i++ {
		put(bundle("big", fmt.Sprintf("big.v1.%d.0", i), fmt.Sprintf("1.%d.0", i)))
	}

	// dense: every entry's skipRange covers every other entry.
	entries = make([]map[string]any, 0, denseChannel)
	for i := 0; i < denseChannel; i++ {
		e := map[string]any{"name": fmt.Sprintf("dense.v%d.0.0", i+1), "skipRange": ">=0.0.0"}
		if i > 0 {
			e["replaces"] = fmt.Sprintf("dense.v%d.0.0", i)
		}
		entries = append(entries, e)
	}
	put(map[string]any{"schema": "olm.package", "name": "dense", "defaultChannel": "stable"})
	put(map[string]any{"schema": "olm.channel", "package": "dense", "name": "stable", "entries": entries})
	for i := 0; i < denseChannel; i++ {
		put(bundle("dense", fmt.Sprintf("dense.v%d.0.0", i+1), fmt.Sprintf("%d.0.0", i+1)))
	}
	if err := os.WriteFile(filepath.Join(dir, "catalog.json"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}
