package render

import (
	"context"
	"errors"
	"strings"
	"testing"
)

func TestRenderEach(t *testing.T) {
	bundle := "testdata/image/bundle"
	catalog := "testdata/image/catalog"
	refs := []string{bundle, "no-such-image", catalog, bundle}
	res, err := RenderEach(context.Background(), Options{Refs: refs, AllowedRefMask: RefBundleDir | RefBundleImage})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != len(refs) {
		t.Fatalf("%d results for %d references", len(res), len(refs))
	}
	for i, r := range res {
		if r.Ref != refs[i] {
			t.Errorf("result %d is for %q, want %q", i, r.Ref, refs[i])
		}
	}
	if res[0].Err != nil || len(res[0].Config.Bundles) != 1 || res[0].Config.Bundles[0].Name != "tiny.v1.0.0" {
		t.Errorf("bundle: %+v", res[0])
	}
	if res[1].Err == nil || !strings.Contains(res[1].Err.Error(), `render reference "no-such-image": invalid image reference`) {
		t.Errorf("missing image: %v", res[1].Err)
	}
	if !errors.Is(res[2].Err, ErrNotAllowed) {
		t.Errorf("catalog directory: %v", res[2].Err)
	}
	// A reference given twice is rendered once.
	if res[3].Config != res[0].Config {
		t.Error("duplicate reference rendered twice")
	}

	if _, err := RenderEach(context.Background(), Options{Refs: refs, MigrationLevel: "bogus"}); err == nil {
		t.Error("unknown migration level accepted")
	}
}
