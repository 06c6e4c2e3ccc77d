package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/opmkit/opm/internal/registrytest"
)

// TestTemplateScript runs testdata/templatescript/*.txtar: catalog
// templates and registries.conf through the CLI, with the image commands of
// registrytest.ScriptCmds and `envsubst IN OUT`, which copies IN to OUT
// with $VARS expanded (templates and registries.conf name $REGISTRY).
func TestTemplateScript(t *testing.T) {
	cmds := registrytest.ScriptCmds()
	cmds["envsubst"] = cmdEnvsubst
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/templatescript",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("OPM_UPDATE") == "1",
		Cmds:                cmds,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CACHE_HOME", env.WorkDir+"/home/.cache")
			env.Setenv("TMPDIR", env.WorkDir+"/tmp")
			env.Setenv("CONTAINERS_REGISTRIES_CONF", "")
			return os.MkdirAll(env.WorkDir+"/tmp", 0o700)
		},
	})
}

// cmdEnvsubst is `envsubst IN OUT`: copy IN to OUT with $VARS expanded.
func cmdEnvsubst(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: envsubst IN OUT")
	}
	ts.Check(os.WriteFile(ts.MkAbs(args[1]), []byte(os.Expand(ts.ReadFile(args[0]), ts.Getenv)), 0o644))
}
