// Package root assembles the opm command tree and is the one place where
// errors are printed and turned into exit codes.
package root

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/declcfg"
)

// New builds the root command with every subcommand.
func New(ios *cmdutil.IOStreams) *cobra.Command {
	g := &cmdutil.GlobalOptions{MaxFileSize: declcfg.DefaultMaxFileSize}
	cmd := &cobra.Command{
		Use:   "opm",
		Short: "operator package manager",
		Long: `opm builds, renders, validates and inspects Operator Lifecycle Manager
file-based catalogs (FBC) and operator bundles.`,
		Args:          cobra.NoArgs,
		Run:           func(*cobra.Command, []string) {},
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	cmd.SetIn(ios.In)
	cmd.SetOut(ios.Out)
	cmd.SetErr(ios.ErrOut)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return &cmdutil.FlagError{Err: err}
	})

	pf := cmd.PersistentFlags()
	pf.BoolVar(&g.SkipTLSVerify, "skip-tls-verify", false, "skip TLS certificate verification for container image registries while pulling bundles or index")
	pf.BoolVar(&g.UseHTTP, "use-http", false, "use plain HTTP for container image registries while pulling bundles or index")
	pf.BoolVar(&g.SkipTLS, "skip-tls", false, "skip TLS for container image registries while pulling bundles or index")
	// Not pflag's MarkDeprecated: cobra prints its notice on the "out"
	// writer, i.e. into the stdout scripts pipe to jq. Same words, stderr.
	_ = pf.MarkHidden("skip-tls")
	pf.Var(cmdutil.SizeValue{N: &g.MaxFileSize}, "max-file-size", "largest catalog or bundle file read (bytes, or with KiB, MiB, GiB; 0: no limit)")
	cmd.PersistentPreRun = func(c *cobra.Command, _ []string) {
		if f := c.Flags().Lookup("skip-tls"); f != nil && f.Changed {
			fmt.Fprintln(ios.ErrOut, "Flag --skip-tls has been deprecated, use --use-http and --skip-tls-verify instead")
		}
		c.SetContext(declcfg.WithMaxFileSize(c.Context(), g.MaxFileSize))
	}

	alpha := &cobra.Command{
		Use:    "alpha",
		Short:  "Run an alpha subcommand",
		Hidden: os.Getenv("HELP_ALPHA") != "true",
		Args:   cobra.NoArgs,
		Run:    func(*cobra.Command, []string) {},
	}
	cmd.AddCommand(alpha)

	for _, c := range commands {
		sub := c.build(ios, g)
		if c.alpha {
			alpha.AddCommand(sub)
		} else {
			cmd.AddCommand(sub)
		}
	}
	configureAlphaFlags(cmd)
	wrapArgErrors(cmd)
	return cmd
}

// wrapArgErrors turns cobra's positional-argument errors into FlagErrors
// so they exit with the usage code.
func wrapArgErrors(cmd *cobra.Command) {
	if cmd.Args != nil {
		orig := cmd.Args
		cmd.Args = func(c *cobra.Command, args []string) error {
			if err := orig(c, args); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			return nil
		}
	}
	for _, c := range cmd.Commands() {
		wrapArgErrors(c)
	}
}

// configureAlphaFlags hides every --alpha-* flag unless HELP_ALPHA=true and
// prefixes its usage with upstream's warning.
func configureAlphaFlags(cmd *cobra.Command) {
	show := os.Getenv("HELP_ALPHA") == "true"
	visit := func(fs *pflag.FlagSet) {
		fs.VisitAll(func(f *pflag.Flag) {
			if strings.HasPrefix(f.Name, "alpha-") {
				f.Hidden = !show
				f.Usage = "(ALPHA: This flag will be removed or renamed in a future release, potentially without notice) " + f.Usage
			}
		})
	}
	visit(cmd.Flags())
	for _, c := range cmd.Commands() {
		configureAlphaFlags(c)
	}
}

// Main runs opm with os.Args and the process streams and returns the exit
// code. Errors are printed here and nowhere else.
func Main() int {
	return Run(os.Args[1:], cmdutil.System())
}

// Run runs opm with args on ios and returns the exit code.
func Run(args []string, ios *cmdutil.IOStreams) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cmd := New(ios)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	if err != nil && cmdutil.ShouldPrint(err) {
		fmt.Fprintf(ios.ErrOut, "Error: %v\n", err)
		if errors.Is(err, declcfg.ErrFileTooLarge) {
			fmt.Fprintln(ios.ErrOut, "The limit is set with --max-file-size.")
		}
		var fe *cmdutil.FlagError
		if errors.As(err, &fe) {
			c, _, ferr := cmd.Find(args)
			if ferr != nil || c == nil {
				c = cmd
			}
			fmt.Fprintf(ios.ErrOut, "Run '%s --help' for usage.\n", c.CommandPath())
		}
	}
	return cmdutil.ExitCode(err)
}
