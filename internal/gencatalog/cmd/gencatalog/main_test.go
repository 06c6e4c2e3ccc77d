package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
		wantOut string
	}{
		{"Success/JSON", []string{"-packages", "3", "-bundles", "2", "-o", filepath.Join(dir, "j")}, "", "wrote 3 packages, 6 bundles"},
		{"Success/YAML", []string{"-packages", "2", "-bundles", "2", "-format", "yaml", "-seed", "5", "-q", "-o", filepath.Join(dir, "y")}, "", ""},
		{"Success/Force", []string{"-packages", "3", "-bundles", "2", "-force", "-q", "-o", filepath.Join(dir, "j")}, "", ""},
		{"Error/NotEmpty", []string{"-packages", "3", "-bundles", "2", "-o", filepath.Join(dir, "j")}, "directory is not empty", ""},
		{"Error/NoOutput", []string{"-packages", "3"}, "-o DIR is required", ""},
		{"Error/Format", []string{"-format", "toml", "-o", filepath.Join(dir, "t")}, `invalid format "toml"`, ""},
		{"Error/Packages", []string{"-packages", "0", "-o", filepath.Join(dir, "z")}, "invalid number of packages 0", ""},
		{"Error/Args", []string{"-o", filepath.Join(dir, "a"), "extra"}, `unexpected arguments ["extra"]`, ""},
		{"Error/Flag", []string{"-nope"}, "flag provided but not defined", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stderr)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(stderr.String(), tc.wantOut) || (tc.wantOut == "" && stderr.Len() > 0) {
				t.Errorf("stderr %q, want %q", stderr.String(), tc.wantOut)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "y", "pkg-002", "catalog.yaml")); err != nil {
		t.Error(err)
	}
	if err := run(context.Background(), []string{"-h"}, &bytes.Buffer{}); err != flag.ErrHelp {
		t.Errorf("-h: got %v, want flag.ErrHelp", err)
	}
}
