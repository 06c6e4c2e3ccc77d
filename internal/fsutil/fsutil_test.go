package fsutil

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestEmptyOrAbsent(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		path    string
		want    bool
		notADir bool
	}{
		{"Success/Absent", filepath.Join(dir, "missing"), true, false},
		{"Success/Empty", t.TempDir(), true, false},
		{"Success/NotEmpty", dir, false, false},
		{"Error/File", file, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EmptyOrAbsent(tc.path)
			if tc.notADir != errors.Is(err, ErrNotDirectory) || (!tc.notADir && err != nil) {
				t.Fatalf("err = %v", err)
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMkdirUnique(t *testing.T) {
	parent := t.TempDir()
	a, err := MkdirUnique(parent, ".x-")
	if err != nil {
		t.Fatal(err)
	}
	b, err := MkdirUnique(parent, ".x-")
	if err != nil {
		t.Fatal(err)
	}
	if a == b || filepath.Dir(a) != parent {
		t.Fatalf("got %s and %s", a, b)
	}
	if st, err := os.Stat(a); err != nil || !st.IsDir() {
		t.Fatalf("%s: %v", a, err)
	}
}
