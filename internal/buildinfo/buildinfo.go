// Package buildinfo holds the version stamped into the binary at link time
// (-X github.com/opmkit/opm/internal/buildinfo.Version=... and friends).
package buildinfo

import (
	"runtime"
	"runtime/debug"
)

// Set by the linker; see the Makefile.
var (
	Version   = ""
	GitCommit = ""
	BuildDate = ""
)

// Info describes this build.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit"`
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
	GoOS      string `json:"goOs"`
	GoArch    string `json:"goArch"`
}

// Get returns the build information, falling back to the module build
// information embedded by the Go toolchain when no ldflags were given.
func Get() Info {
	info := Info{
		Version:   Version,
		GitCommit: GitCommit,
		BuildDate: BuildDate,
		GoVersion: runtime.Version(),
		GoOS:      runtime.GOOS,
		GoArch:    runtime.GOARCH,
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if info.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			info.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if info.GitCommit == "" {
					info.GitCommit = s.Value
				}
			case "vcs.time":
				if info.BuildDate == "" {
					info.BuildDate = s.Value
				}
			}
		}
	}
	if info.Version == "" {
		info.Version = "devel"
	}
	return info
}
