package view_test

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"testing"
)

// TestOLMv1Badge: the package page marks the bundles OLM v1 refuses
// (web-console's declare dependencies), with the rule codes in its JSON
// and a legend on the page.
func TestOLMv1Badge(t *testing.T) {
	s := newServer(t, nil, example)
	var data struct {
		Bundles []struct {
			Name         string   `json:"name"`
			OLMv1Refused []string `json:"olmV1Refused"`
		} `json:"bundleList"`
	}
	resp := get(t, s, "", "/api/packages/web-console")
	if err := json.NewDecoder(resp.Body).Decode(&data); err != nil {
		t.Fatal(err)
	}
	refused := map[string][]string{}
	for _, b := range data.Bundles {
		refused[b.Name] = b.OLMv1Refused
	}
	if !slices.Equal(refused["web-console.v2.1.0"], []string{"olmv1-dependency"}) {
		t.Errorf("web-console.v2.1.0: olmV1Refused %v, want [olmv1-dependency]", refused["web-console.v2.1.0"])
	}
	page, err := io.ReadAll(get(t, s, "", "/packages/web-console").Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), `<span class="badge err" title="olmv1-dependency">OLM v1 refuses</span>`) ||
		!strings.Contains(string(page), "does not install the bundle") {
		t.Error("the package page has no OLM v1 badge or legend")
	}
	resp = get(t, s, "", "/api/packages/cache-operator")
	if body, _ := io.ReadAll(resp.Body); strings.Contains(string(body), "olmV1Refused") {
		t.Error("cache-operator's bundles are installable, yet marked")
	}
}
