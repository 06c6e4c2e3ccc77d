package validate

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/olmv1"
)

// TestOLMv1ConformanceCatalogs runs the OLM v1 checks on every catalog of
// the conformance suite, and checks the summaries of those whose verdicts
// are known: trustee's bundles (with olm.bundle.object) support
// OwnNamespace and SingleNamespace only; the community catalog's are
// checked from their olm.csv.metadata.
func TestOLMv1ConformanceCatalogs(t *testing.T) {
	dirs, _ := filepath.Glob(filepath.Join(conformanceDir, "catalog", "*", "input"))
	if len(dirs) == 0 {
		t.Skipf("conformance suite not found at %s", conformanceDir)
	}
	type counts struct{ packages, packagesOK, channelsOK, bundles, bundlesOK, notRead int }
	want := map[string]counts{
		"trustee-fbc-v4.16":              {1, 0, 0, 5, 0, 0},
		"community-operators-prod-v4.20": {37, 30, 75, 803, 732, 803},
	}
	ctx := context.Background()
	for _, dir := range dirs {
		name := filepath.Base(filepath.Dir(dir))
		t.Run(name, func(t *testing.T) {
			if st, err := os.Stat(dir); err != nil || !st.IsDir() {
				t.Skip("not a directory")
			}
			ix, err := declcfg.IndexDir(ctx, dir)
			if err != nil {
				t.Skipf("does not load: %v", err)
			}
			defer ix.Close()
			res, err := ValidateIndex(ctx, ix, Options{OLMv1: &OLMv1Options{Gates: olmv1.DefaultGates()}})
			if err != nil {
				t.Fatal(err)
			}
			s := res.OLMv1
			for _, f := range res.Findings {
				if f.Code != CodeLoad && f.File == "" && f.Package != "" {
					t.Errorf("finding without a position: %+v", f)
				}
			}
			w, ok := want[name]
			if !ok {
				return
			}
			got := counts{s.Packages, s.PackagesInstallable, s.ChannelsInstallable, s.Bundles, s.BundlesInstallable, s.ManifestsNotRead}
			if got != w {
				t.Errorf("summary %+v, want %+v", got, w)
			}
		})
	}
}
