// Package version implements `opm version`.
package version

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/internal/buildinfo"
)

// Options are the flags of `opm version`.
type Options struct {
	IO     *cmdutil.IOStreams
	Output string
}

// NewCmd builds `opm version`.
func NewCmd(ios *cmdutil.IOStreams) *cobra.Command {
	opts := &Options{IO: ios}
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the opm version",
		Long: `Print the version, git commit, build date, Go version and platform of this binary.

The default text form matches upstream opm's Go-syntax struct (with the Go
version added); -o json prints an object for scripts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return Run(opts)
		},
	}
	cmd.Flags().StringVarP(&opts.Output, "output", "o", "text", "output format (text|json)")
	return cmd
}

// Run prints the version.
func Run(opts *Options) error {
	if err := cmdutil.CheckOutput(opts.Output, "text", "json"); err != nil {
		return err
	}
	info := buildinfo.Get()
	if opts.Output == "json" {
		return cmdutil.WriteJSON(opts.IO.Out, info)
	}
	_, err := fmt.Fprintf(opts.IO.Out, "Version: version.Version{OpmVersion:%q, GitCommit:%q, BuildDate:%q, GoVersion:%q, GoOs:%q, GoArch:%q}\n",
		info.Version, info.GitCommit, info.BuildDate, info.GoVersion, info.GoOS, info.GoArch)
	return err
}
