package versionrange

import (
	"testing"

	"github.com/blang/semver/v4"
)

var fuzzVersions = []semver.Version{
	semver.MustParse("0.0.0"), semver.MustParse("1.2.3"), semver.MustParse("1.2.3-rc.1"),
	semver.MustParse("1.2.3+build"), semver.MustParse("2.0.0"), semver.MustParse("10.20.30-alpha.1+b.2"),
}

// FuzzParse feeds arbitrary text to both dialects' parsers: they must not
// panic, and a range that parses must answer for any version.
func FuzzParse(f *testing.F) {
	for _, s := range []string{">=1.11, <1.13", "1.11.x", "~1.12", "^0.0.3", "*", "<=2.x", ">=1.0.0 <2.0.0 || >3", "!=1.2.3", "v1.2", ">=4.1.0 <4.1.2", "", "||", ">= ,"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if r, err := Parse(s); err == nil {
			for _, v := range fuzzVersions {
				_ = r.ContainsVersion(v)
			}
			_ = r.Contains(s)
		}
		if r, err := ParseSkipRange(s); err == nil {
			for _, v := range fuzzVersions {
				_ = r.Contains(v)
			}
		}
	})
}
