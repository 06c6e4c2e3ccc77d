package main

import (
	"os"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/opmkit/opm/internal/registrytest"
)

// TestImageScript runs testdata/imagescript/*.txtar: image references
// through the CLI, with commands that start an in-process registry and push
// images (see registrytest.ScriptCmds), `envsubst IN OUT` (see
// TestTemplateScript) and `exits CODE PROGRAM...` (see TestScript). TMPDIR is $WORK/tmp, so scripts can check that
// nothing is left behind.
func TestImageScript(t *testing.T) {
	cmds := registrytest.ScriptCmds()
	cmds["envsubst"] = cmdEnvsubst
	cmds["exits"] = cmdExits
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/imagescript",
		RequireExplicitExec: true,
		RequireUniqueNames:  true,
		UpdateScripts:       os.Getenv("OPM_UPDATE") == "1",
		Cmds:                cmds,
		Setup: func(env *testscript.Env) error {
			env.Setenv("HOME", env.WorkDir+"/home")
			env.Setenv("XDG_CACHE_HOME", env.WorkDir+"/home/.cache")
			env.Setenv("TMPDIR", env.WorkDir+"/tmp")
			return os.MkdirAll(env.WorkDir+"/tmp", 0o700)
		},
	})
}
