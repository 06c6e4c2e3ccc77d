package graph

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

func TestChannelHead(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		want    string
		wantErr string
	}{
		{name: "Success/single", entries: []Entry{{Name: "a"}}, want: "a"},
		{name: "Success/replaces", entries: []Entry{{Name: "a"}, {Name: "b", Replaces: "a"}}, want: "b"},
		{name: "Success/skips count", entries: []Entry{{Name: "a"}, {Name: "b", Skips: []string{"a"}}}, want: "b"},
		{name: "Success/target outside channel", entries: []Entry{{Name: "b", Replaces: "a"}}, want: "b"},
		{name: "Error/skipRange does not count", entries: []Entry{{Name: "a"}, {Name: "b", SkipRange: "<1.0.0"}},
			wantErr: "multiple channel heads found in graph: a, b"},
		{name: "Error/heads sorted", entries: []Entry{{Name: "c"}, {Name: "a"}, {Name: "b"}},
			wantErr: "multiple channel heads found in graph: a, b, c"},
		{name: "Error/pure cycle", entries: []Entry{{Name: "a", Replaces: "b"}, {Name: "b", Replaces: "a"}},
			wantErr: "no channel head found in graph"},
		{name: "Error/empty", wantErr: "no channel head found in graph"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Channel{Package: "p", Name: "c", Entries: tt.entries}
			got, err := c.Head()
			checkErr(t, err, tt.wantErr)
			if got != tt.want {
				t.Errorf("Head() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChannelReplacesChain(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		want    []string
		wantErr string
	}{
		{name: "Success/linear", entries: []Entry{{Name: "a"}, {Name: "b", Replaces: "a"}, {Name: "c", Replaces: "b"}},
			want: []string{"c", "b", "a"}},
		{name: "Success/stops at skipped target", entries: []Entry{{Name: "a"}, {Name: "b", Replaces: "a"}, {Name: "c", Replaces: "b", Skips: []string{"b"}}},
			want: []string{"c"}},
		{name: "Success/stops at skipped target skipped elsewhere", entries: []Entry{{Name: "a"}, {Name: "b", Replaces: "a", Skips: []string{"x"}}, {Name: "c", Replaces: "b", Skips: []string{"a"}}},
			want: []string{"c", "b"}},
		{name: "Success/stops outside channel", entries: []Entry{{Name: "b", Replaces: "a"}, {Name: "c", Replaces: "b"}},
			want: []string{"c", "b"}},
		{name: "Error/cycle below head", entries: []Entry{{Name: "a", Replaces: "b"}, {Name: "b", Replaces: "a"}, {Name: "c", Replaces: "b"}},
			wantErr: "detected cycle in replaces chain of upgrade graph: b -> a -> b"},
		{name: "Error/self cycle", entries: []Entry{{Name: "a", Replaces: "a"}, {Name: "c", Replaces: "a"}},
			wantErr: "detected cycle in replaces chain of upgrade graph: a -> a"},
		{name: "Error/long cycle", entries: []Entry{{Name: "d", Replaces: "c"}, {Name: "c", Replaces: "b"}, {Name: "b", Replaces: "a"}, {Name: "a", Replaces: "c"}},
			wantErr: "detected cycle in replaces chain of upgrade graph: c -> b -> a -> c"},
		{name: "Error/no head", entries: []Entry{{Name: "a", Replaces: "b"}, {Name: "b", Replaces: "a"}},
			wantErr: "no channel head found in graph"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Channel{Package: "p", Name: "c", Entries: tt.entries}
			got, err := c.ReplacesChain()
			checkErr(t, err, tt.wantErr)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ReplacesChain() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChannelErrorTypes(t *testing.T) {
	c := &Channel{Entries: []Entry{{Name: "a", Replaces: "b"}, {Name: "b", Replaces: "a"}, {Name: "c", Replaces: "b"}}}
	_, err := c.Stranded()
	var ce *CycleError
	if !errors.As(err, &ce) || !reflect.DeepEqual(ce.Path, []string{"b", "a", "b"}) {
		t.Errorf("Stranded() error = %v, want a *CycleError b -> a -> b", err)
	}
	c = &Channel{Entries: []Entry{{Name: "a"}, {Name: "b"}}}
	_, err = c.Stranded()
	var me *MultipleHeadsError
	if !errors.As(err, &me) {
		t.Errorf("Stranded() error = %v, want *MultipleHeadsError", err)
	}
	c = &Channel{}
	if _, err := c.Stranded(); !errors.Is(err, ErrNoHead) {
		t.Errorf("Stranded() error = %v, want ErrNoHead", err)
	}
	if got := (&StrandedError{Bundles: []string{"a", "b"}}).Error(); got != "channel contains one or more stranded bundles: a, b" {
		t.Errorf("StrandedError = %q", got)
	}
}

func TestChannelStranded(t *testing.T) {
	tests := []struct {
		name    string
		entries []Entry
		want    []string
	}{
		{name: "Success/none", entries: []Entry{{Name: "a"}, {Name: "b", Replaces: "a"}}},
		{name: "Success/skipped are not stranded", entries: []Entry{{Name: "a"}, {Name: "b", Skips: []string{"a"}}}},
		{name: "Success/below a skipped replaces target", entries: []Entry{{Name: "z"}, {Name: "a", Replaces: "z"}, {Name: "b", Replaces: "a", Skips: []string{"a"}}},
			want: []string{"z"}},
		{name: "Success/sorted", entries: []Entry{{Name: "y"}, {Name: "x", Replaces: "y"}, {Name: "a", Replaces: "x", Skips: []string{"x"}}, {Name: "w"}, {Name: "head", Replaces: "a", Skips: []string{"w"}}},
			want: []string{"y"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &Channel{Package: "p", Name: "c", Entries: tt.entries}
			got, err := c.Stranded()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Stranded() = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestConformanceChannels checks the channel invariants against upstream's
// verdicts on the invalid/ cases of the conformance suite.
func TestConformanceChannels(t *testing.T) {
	root := filepath.Join("..", "..", "..", "shared", "conformance", "invalid")
	if _, err := os.Stat(root); err != nil {
		t.Skipf("conformance suite not found at %s: %v", root, err)
	}
	tests := []struct {
		name string
		want string // "" = channel valid
	}{
		{name: "cycle", want: "detected cycle in replaces chain of upgrade graph: foo.v0.2.0 -> foo.v0.1.0 -> foo.v0.2.0"},
		{name: "multihead", want: "multiple channel heads found in graph: foo.v0.1.0, foo.v0.2.0"},
		{name: "stranded", want: "multiple channel heads found in graph: foo.v0.1.0, foo.v0.3.0"},
		{name: "stranded2"},
		{name: "stranded3", want: "channel contains one or more stranded bundles: foo.v0.1.0"},
	}
	for _, tt := range tests {
		t.Run("Success/"+tt.name, func(t *testing.T) {
			dir := filepath.Join(root, tt.name)
			want, err := os.ReadFile(filepath.Join(dir, "validate.stdout"))
			if err != nil {
				t.Fatal(err)
			}
			if tt.want != "" && !strings.Contains(strings.ReplaceAll(string(want), `\u003e`, ">"), tt.want) {
				t.Fatalf("validate.stdout does not hold %q; the test table is out of date", tt.want)
			}
			chans := loadYAMLChannels(t, filepath.Join(dir, "input", "catalog.yaml"))
			if len(chans) != 1 {
				t.Fatalf("got %d channels, want 1", len(chans))
			}
			got := ""
			stranded, err := chans[0].Stranded()
			switch {
			case err != nil:
				got = err.Error()
			case len(stranded) > 0:
				got = (&StrandedError{Bundles: stranded}).Error()
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// loadYAMLChannels reads the olm.channel documents of a multi-document
// YAML file (the conformance inputs use plain "---" separators).
func loadYAMLChannels(t *testing.T, path string) []*Channel {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []*Channel
	for _, doc := range strings.Split(string(data), "\n---") {
		var blob struct {
			Schema  string `json:"schema"`
			Package string `json:"package"`
			Name    string `json:"name"`
			Entries []struct {
				Name      string   `json:"name"`
				Replaces  string   `json:"replaces"`
				Skips     []string `json:"skips"`
				SkipRange string   `json:"skipRange"`
			} `json:"entries"`
		}
		if err := yaml.Unmarshal([]byte(doc), &blob); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if blob.Schema != "olm.channel" {
			continue
		}
		c := &Channel{Package: blob.Package, Name: blob.Name}
		for _, e := range blob.Entries {
			c.Entries = append(c.Entries, Entry{Name: e.Name, Replaces: e.Replaces, Skips: e.Skips, SkipRange: e.SkipRange})
		}
		out = append(out, c)
	}
	return out
}

func checkErr(t *testing.T, err error, want string) {
	t.Helper()
	switch {
	case want == "" && err != nil:
		t.Fatalf("unexpected error: %v", err)
	case want != "" && err == nil:
		t.Fatalf("got no error, want %q", want)
	case want != "" && err.Error() != want:
		t.Fatalf("error = %q, want %q", err.Error(), want)
	}
}
