package catalogedit

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// conformanceCatalogs is ../shared/conformance/catalog beside the
// repository.
const conformanceCatalogs = "../../../../shared/conformance/catalog"

// BenchmarkPromoteDryRun times a dry-run promote on the largest conformance
// catalog (15 MB, 37 packages): load, validate, edit, validate, diff.
func BenchmarkPromoteDryRun(b *testing.B) {
	dir := filepath.Join(conformanceCatalogs, "community-operators-prod-v4.20", "input")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("conformance suite not found")
	}
	opts := PromoteOptions{
		Common:  Common{Catalog: dir, DryRun: true},
		Package: "coherence-operator", Bundle: "coherence-operator.v3.5.7", Channels: []string{"fast"}, Create: true,
	}
	for b.Loop() {
		if _, err := Promote(context.Background(), opts); err != nil {
			b.Fatal(err)
		}
	}
}
