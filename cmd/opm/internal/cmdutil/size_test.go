package cmdutil

import "testing"

func TestSizeValue(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "256MiB": 256 << 20, "256Mi": 256 << 20, "1GiB": 1 << 30,
		"512KiB": 512 << 10, "10B": 10, " 2 GiB ": 2 << 30,
	} {
		var n int64
		if err := (SizeValue{N: &n}).Set(in); err != nil || n != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, n, err, want)
		}
	}
	for _, in := range []string{"", "lots", "-1", "1.5GiB", "1TB", "1MB", "99999999999GiB"} {
		var n int64
		if err := (SizeValue{N: &n}).Set(in); err == nil {
			t.Errorf("Set(%q) = %d, want an error", in, n)
		}
	}
	for n, want := range map[int64]string{0: "0", 256 << 20: "256MiB", 1 << 30: "1GiB", 1536 << 20: "1536MiB", 1000: "1000", 3 << 10: "3KiB"} {
		if got := (SizeValue{N: &n}).String(); got != want {
			t.Errorf("String(%d) = %q, want %q", n, got, want)
		}
	}
}

// FuzzSizeValue: Set never panics, and String gives back what Set reads
// as the same size.
func FuzzSizeValue(f *testing.F) {
	for _, s := range []string{"0", "256MiB", "1Gi", "12345", "1KiB", "-5", "9223372036854775807", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var n int64
		if err := (SizeValue{N: &n}).Set(s); err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("Set(%q) = %d", s, n)
		}
		var back int64
		if err := (SizeValue{N: &back}).Set((SizeValue{N: &n}).String()); err != nil || back != n {
			t.Fatalf("%q -> %d -> %q -> %d, %v", s, n, SizeValue{N: &n}.String(), back, err)
		}
	})
}
