package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/opmkit/opm/cmd/opm/internal/root"
)

func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"opm": func() { os.Exit(root.Main()) },
	})
}

// TestScript runs every testdata/script/*.txtar. OPM_UPDATE=1 rewrites the
// expected files of `cmp` lines in place.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("OPM_UPDATE") == "1",
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CACHE_HOME", env.WorkDir+"/home/.cache")
			return nil
		},
	})
}
