// Package version implements `opm version`: [version.Run] once, printed as
// upstream's text or -o json.
package version

import (
	"io"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action/version"
)

// NewCmd builds `opm version`.
func NewCmd(ios *cmdutil.IOStreams) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the opm version",
		Long: `Print the version, git commit, build date, Go version and platform of this binary.

The default text form matches upstream opm's Go-syntax struct (with the Go
version added); -o json prints an object for scripts.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := cmdutil.CheckOutput(output, "text", "json"); err != nil {
				return err
			}
			info := version.Run()
			if output == "json" {
				return cmdutil.WriteJSON(ios.Out, info)
			}
			_, err := io.WriteString(ios.Out, info.Text())
			return err
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format (text|json)")
	return cmd
}
