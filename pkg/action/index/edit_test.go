package index_test

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opmkit/opm/pkg/action"
	indexaction "github.com/opmkit/opm/pkg/action/index"
	"github.com/opmkit/opm/pkg/declcfg"
)

// realDB writes pkg/sqlite's testdata/real/NAME.db.gz, a database from
// operator-registry's history, to a file of dir.
func realDB(t *testing.T, dir, name string) string {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "sqlite", "testdata", "real", name+".db.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, name+".db")
	w, err := os.Create(out)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(w, zr); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return out
}

func generateTo(dir string) indexaction.Output {
	return indexaction.Output{Generate: true, CatalogDir: filepath.Join(dir, "index"), OutDockerfile: filepath.Join(dir, "index.Dockerfile")}
}

func bundleNames(cfg *declcfg.DeclarativeConfig) []string {
	var out []string
	for _, b := range cfg.Bundles {
		out = append(out, b.Package+"/"+b.Name)
	}
	return out
}

func TestEditSQLite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := realDB(t, dir, "bundles")

	// rm on the sqlite index: the catalog directory and Dockerfile, with
	// the other two packages as the database renders them.
	res, err := indexaction.Edit(ctx, indexaction.EditOptions{Kind: indexaction.EditRemove, FromIndex: db, Packages: []string{"etcd"}, Output: generateTo(dir)})
	if err != nil {
		t.Fatal(err)
	}
	if !res.FromSQLite || len(res.Files) != 2 {
		t.Fatalf("result %+v, want an sqlite from-index and two files written", res)
	}
	got, err := declcfg.LoadDir(ctx, res.Files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bundleNames(got) {
		if strings.HasPrefix(b, "etcd/") {
			t.Errorf("bundle %s left after rm", b)
		}
	}
	if len(got.Packages) != 2 {
		t.Errorf("%d packages written, want 2", len(got.Packages))
	}
	if _, err := os.Stat(res.Files[1]); err != nil {
		t.Error(err)
	}

	// What was written is never replaced unless asked, and that is known
	// before the index is read.
	_, err = indexaction.Edit(ctx, indexaction.EditOptions{Kind: indexaction.EditPrune, FromIndex: filepath.Join(dir, "absent.db"), Packages: []string{"etcd"}, Output: generateTo(dir)})
	if err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("err = %v, want the catalog directory refused", err)
	}

	// prune with a misspelt name: refused, unless permissive.
	out := generateTo(dir)
	out.Overwrite = true
	_, err = indexaction.Edit(ctx, indexaction.EditOptions{Kind: indexaction.EditPrune, FromIndex: db, Packages: []string{"prometheus", "etcd-operator"}, Output: out})
	if err == nil || !strings.Contains(err.Error(), `"etcd-operator"`) || !strings.Contains(err.Error(), "--permissive") {
		t.Errorf("err = %v, want etcd-operator refused, naming --permissive", err)
	}
	var warned []string
	res, err = indexaction.Edit(ctx, indexaction.EditOptions{Kind: indexaction.EditPrune, FromIndex: db, Packages: []string{"prometheus", "etcd-operator"}, Permissive: true, Output: out, Warn: func(s string) { warned = append(warned, s) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "etcd-operator") {
		t.Errorf("warnings %q, want one naming etcd-operator", warned)
	}
	if len(res.Config.Packages) != 1 || res.Config.Packages[0].Name != "prometheus" {
		t.Errorf("packages %+v, want prometheus only", res.Config.Packages)
	}
}

func TestEditRefusals(t *testing.T) {
	ctx := context.Background()
	// Neither a tag nor --generate: a usage error, before any work.
	_, err := indexaction.Edit(ctx, indexaction.EditOptions{Kind: indexaction.EditPruneStranded, FromIndex: "absent.db"})
	var ue *action.UsageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--tag is required") {
		t.Errorf("err = %v, want a usage error asking for --tag", err)
	}
	if _, err := indexaction.Edit(ctx, indexaction.EditOptions{Kind: "truncate"}); err == nil {
		t.Error("unknown edit accepted")
	}
	// An index that does not exist is named.
	dir := t.TempDir()
	_, err = indexaction.Edit(ctx, indexaction.EditOptions{Kind: indexaction.EditPruneStranded, FromIndex: filepath.Join(dir, "absent.db"), Output: generateTo(dir)})
	if err == nil || !strings.Contains(err.Error(), "absent.db") {
		t.Errorf("err = %v, want one naming absent.db", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "index")); !os.IsNotExist(err) {
		t.Errorf("catalog directory written after a failure: %v", err)
	}
}

func TestDeprecateTruncate(t *testing.T) {
	ctx := context.Background()
	db := realDB(t, t.TempDir(), "foo-index")
	err := indexaction.DeprecateTruncate(ctx, indexaction.DeprecateTruncateOptions{FromIndex: db, Bundles: []string{"test.registry/foo-operator/foo-bundle:v0.2.0"}})
	var de *indexaction.DeprecateTruncateError
	if !errors.As(err, &de) {
		t.Fatalf("err = %v, want a DeprecateTruncateError", err)
	}
	want := indexaction.DeprecateStep{Image: "test.registry/foo-operator/foo-bundle:v0.2.0", Package: "foo", Bundle: "foo.v0.2.0", Version: "0.2.0"}
	if len(de.Steps) != 1 || de.Steps[0] != want {
		t.Errorf("steps %+v, want %+v", de.Steps, want)
	}
	for _, s := range []string{"opm catalog deprecate bundle -C DIR foo foo.v0.2.0", "opm catalog prune -C DIR foo --before 0.2.0", "'opm migrate " + db + " DIR'"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("message lacks %q:\n%v", s, err)
		}
	}

	err = indexaction.DeprecateTruncate(ctx, indexaction.DeprecateTruncateOptions{FromIndex: db, Bundles: []string{"test.registry/foo-operator/foo-bundle:v9"}})
	if errors.As(err, &de) || err == nil || !strings.Contains(err.Error(), "no bundle of image test.registry/foo-operator/foo-bundle:v9") {
		t.Errorf("err = %v, want the missing image named", err)
	}
}
