package ocpversion

import (
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	for in, want := range map[string]string{"4.18": "4.18", "v4.9": "4.9", " 5.0 ": "5.0"} {
		v, err := Parse(in)
		if err != nil || v.String() != want {
			t.Errorf("Parse(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	for _, in := range []string{"", "4", "4.18.1", "4.x", "04.1", "v", "4.-1", "4.99999999"} {
		if v, err := Parse(in); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", in, v)
		}
	}
}

func TestParseKube(t *testing.T) {
	for in, want := range map[string]string{"1.25": "1.25", "1.25.0": "1.25", "v1.30.3": "1.30", "1.29.0-rc.1": "1.29"} {
		v, err := ParseKube(in)
		if err != nil || v.String() != want {
			t.Errorf("ParseKube(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	for _, in := range []string{"", "1", "one.two", "1.2.3.4"} {
		if _, err := ParseKube(in); err == nil {
			t.Errorf("ParseKube(%q): want an error", in)
		}
	}
}

func TestKube(t *testing.T) {
	if k, ok := Kube(Version{4, 17}); !ok || k.String() != "1.30" {
		t.Errorf("Kube(4.17) = %v, %v", k, ok)
	}
	if k, ok := Kube(Newest); !ok || k.String() != "1.35" {
		t.Errorf("Kube(newest) = %v, %v", k, ok)
	}
	if _, ok := Kube(Version{5, 0}); ok {
		t.Error("Kube(5.0) is not known")
	}
	known := Known()
	if len(known) != 22 || known[0].String() != "4.1" || known[21] != Newest {
		t.Errorf("Known() = %v", known)
	}
	for _, v := range known {
		if _, ok := Kube(v); !ok {
			t.Errorf("Known() lists %v without a Kubernetes version", v)
		}
	}
}

func TestParseRange(t *testing.T) {
	v := func(s string) Version {
		x, err := Parse(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	tests := []struct {
		in      string
		in4, no []string
		str     string
	}{
		{"v4.12", []string{"4.12", "4.30"}, []string{"4.11"}, "4.12 and later"},
		{"=v4.12", []string{"4.12"}, []string{"4.11", "4.13"}, "4.12"},
		{"v4.12-v4.14", []string{"4.12", "4.13", "4.14"}, []string{"4.11", "4.15"}, "4.12 to 4.14"},
		{"v4.6,v4.5", []string{"4.5", "4.16"}, []string{"4.4"}, "4.5 and later"},
	}
	for _, tt := range tests {
		r, err := ParseRange(tt.in)
		if err != nil {
			t.Fatalf("ParseRange(%q): %v", tt.in, err)
		}
		for _, s := range tt.in4 {
			if !r.Contains(v(s)) {
				t.Errorf("%q does not contain %s", tt.in, s)
			}
		}
		for _, s := range tt.no {
			if r.Contains(v(s)) {
				t.Errorf("%q contains %s", tt.in, s)
			}
		}
		if r.String() != tt.str {
			t.Errorf("%q: String() = %q, want %q", tt.in, r.String(), tt.str)
		}
	}
	for _, in := range []string{"", "v4.14-v4.12", "4.x", "=", "v4.1-", "v4.5,,v4.6"} {
		if _, err := ParseRange(in); err == nil {
			t.Errorf("ParseRange(%q): want an error", in)
		}
	}
}

func TestWithin(t *testing.T) {
	r := func(s string) Range {
		x, err := ParseRange(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	bound := Version{4, 22}
	tests := []struct {
		a, b string
		want bool
	}{
		{"v4.12", "v4.12", true},
		{"v4.12", "v4.12-v4.22", true}, // open ends at the newest known version
		{"v4.12", "v4.12-v4.20", false},
		{"v4.14-v4.16", "v4.12", true},
		{"v4.11", "v4.12", false},
		{"=v4.16", "v4.12-v4.16", true},
		{"v4.12-v4.30", "v4.12", true},
	}
	for _, tt := range tests {
		if got := r(tt.a).Within(r(tt.b), bound); got != tt.want {
			t.Errorf("%q within %q = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestLabels(t *testing.T) {
	for in, want := range map[string]string{`["v4.18","v4.21"]`: "4.18", "v4.19": "4.19", `["5.0"]`: "5.0"} {
		v, err := FromFBCLabel(in)
		if err != nil || v.String() != want {
			t.Errorf("FromFBCLabel(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	for _, in := range []string{`[]`, `["x"]`, `[4.18]`, ""} {
		if _, err := FromFBCLabel(in); err == nil {
			t.Errorf("FromFBCLabel(%q): want an error", in)
		}
	}
	for in, want := range map[string]string{"v4.18": "4.18", "=v4.16": "4.16"} {
		v, err := FromVersionsLabel(in)
		if err != nil || v.String() != want {
			t.Errorf("FromVersionsLabel(%q) = %v, %v; want %s", in, v, err, want)
		}
	}
	if _, err := FromVersionsLabel("v4.16-v4.18"); err == nil {
		t.Error("a range names no single target")
	}
}

func FuzzParseRange(f *testing.F) {
	for _, s := range []string{"v4.12", "=v4.12", "v4.12-v4.14", "v4.5,v4.6", ">=4.19", "", "-", "v4.1-", `["v4.18"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := ParseRange(s)
		if err != nil {
			return
		}
		if r.Max != nil && r.Max.Compare(r.Min) < 0 {
			t.Fatalf("%q: range %v ends below its start", s, r)
		}
		if !r.Contains(r.Min) {
			t.Fatalf("%q: range %v does not contain its start", s, r)
		}
		_ = r.Within(r, Newest)
		_, _ = FromFBCLabel(s)
		_, _ = FromVersionsLabel(s)
	})
}

func TestFromUint(t *testing.T) {
	if v := FromUint(4, 18); v != (Version{4, 18}) {
		t.Errorf("FromUint(4, 18) = %v", v)
	}
	// semver reads up to 2^64-1; such a number stays the largest, not
	// a negative int.
	huge := FromUint(1<<64-1, 1<<63)
	if huge.Major != math.MaxInt || huge.Minor != math.MaxInt || huge.Compare(Version{4, 18}) <= 0 {
		t.Errorf("FromUint(2^64-1, 2^63) = %v", huge)
	}
}
