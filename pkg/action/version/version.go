// Package version is the action of `opm version`: what this binary is
// (version, commit, build date, Go version, platform).
package version

import (
	"fmt"

	"github.com/opmkit/opm/internal/buildinfo"
)

// Info describes this build; its JSON form is `opm version -o json`.
type Info struct {
	Version   string `json:"version"`
	GitCommit string `json:"gitCommit"`
	BuildDate string `json:"buildDate"`
	GoVersion string `json:"goVersion"`
	GoOS      string `json:"goOs"`
	GoArch    string `json:"goArch"`
}

// Run returns the build information: what the linker stamped in, or else
// what the Go toolchain recorded.
func Run() Info {
	return Info(buildinfo.Get())
}

// Text is the default output: upstream's Go-syntax struct, with the Go
// version added.
func (i Info) Text() string {
	return fmt.Sprintf("Version: version.Version{OpmVersion:%q, GitCommit:%q, BuildDate:%q, GoVersion:%q, GoOs:%q, GoArch:%q}\n",
		i.Version, i.GitCommit, i.BuildDate, i.GoVersion, i.GoOS, i.GoArch)
}
