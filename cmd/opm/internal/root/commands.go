package root

import (
	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/alphabundle"
	"github.com/opmkit/opm/cmd/opm/internal/build"
	bundlecmd "github.com/opmkit/opm/cmd/opm/internal/bundle"
	"github.com/opmkit/opm/cmd/opm/internal/catalog"
	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/cmd/opm/internal/converttemplate"
	crdcmd "github.com/opmkit/opm/cmd/opm/internal/crd"
	"github.com/opmkit/opm/cmd/opm/internal/generate"
	graphcmd "github.com/opmkit/opm/cmd/opm/internal/graph"
	indexcmd "github.com/opmkit/opm/cmd/opm/internal/index"
	"github.com/opmkit/opm/cmd/opm/internal/initcmd"
	"github.com/opmkit/opm/cmd/opm/internal/list"
	"github.com/opmkit/opm/cmd/opm/internal/migrate"
	"github.com/opmkit/opm/cmd/opm/internal/render"
	"github.com/opmkit/opm/cmd/opm/internal/rendergraph"
	"github.com/opmkit/opm/cmd/opm/internal/rendertemplate"
	resolvecmd "github.com/opmkit/opm/cmd/opm/internal/resolve"
	"github.com/opmkit/opm/cmd/opm/internal/serve"
	validatecmd "github.com/opmkit/opm/cmd/opm/internal/validate"
	"github.com/opmkit/opm/cmd/opm/internal/version"
	viewcmd "github.com/opmkit/opm/cmd/opm/internal/view"
)

type command struct {
	alpha bool // registered under `opm alpha`
	build func(*cmdutil.IOStreams, *cmdutil.GlobalOptions) *cobra.Command
}

// commands lists every subcommand; add one line per command.
var commands = []command{
	{build: render.NewCmd},
	{build: func(ios *cmdutil.IOStreams, _ *cmdutil.GlobalOptions) *cobra.Command { return initcmd.NewCmd(ios) }},
	{build: func(ios *cmdutil.IOStreams, _ *cmdutil.GlobalOptions) *cobra.Command { return version.NewCmd(ios) }},
	{build: func(ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) *cobra.Command { return generate.NewCmd(ios, g) }},
	{alpha: true, build: list.NewCmd},
	{build: migrate.NewCmd},
	{alpha: true, build: rendergraph.NewCmd},
	{build: graphcmd.NewCmd},
	{build: validatecmd.NewCmd},
	{alpha: true, build: rendertemplate.NewCmd},
	{alpha: true, build: converttemplate.NewCmd},
	{build: resolvecmd.NewCmd},
	{build: catalog.NewCmd},
	{build: serve.NewCmd},
	{build: build.NewCmd},
	{build: crdcmd.NewCmd},
	{alpha: true, build: alphabundle.NewCmd},
	{build: viewcmd.NewCmd},
	{build: indexcmd.NewCmd},
	{build: bundlecmd.NewCmd},
}
