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
	g := &cmdutil.GlobalOptions{MaxFileSize: declcfg.DefaultMaxFileSize, MaxStdinSize: declcfg.DefaultMaxStdinSize}
	cmd := &cobra.Command{
		Use:   "opm",
		Short: "operator package manager",
		Long: `opm builds, renders, validates and inspects Operator Lifecycle Manager
file-based catalogs (FBC) and operator bundles.

To view help related to alpha features, set HELP_ALPHA=true in the environment.`,
		Args:          cobra.ArbitraryArgs,
		RunE:          runEmpty,
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
	pf.BoolVar(&g.SkipTLSVerify, "skip-tls-verify", false, "skip TLS certificate verification for container image registries while pulling bundles")
	pf.BoolVar(&g.UseHTTP, "use-http", false, "use plain HTTP for container image registries while pulling bundles")
	pf.BoolVar(&g.SkipTLS, "skip-tls", false, "skip TLS for container image registries while pulling bundles or index")
	// Not pflag's MarkDeprecated: cobra prints its notice on the "out"
	// writer, i.e. into the stdout scripts pipe to jq. Same words, stderr.
	_ = pf.MarkHidden("skip-tls")
	pf.Var(cmdutil.SizeValue{N: &g.MaxFileSize}, "max-file-size", "largest catalog or bundle file read (bytes, or with KiB, MiB, GiB; 0: no limit)")
	pf.Var(cmdutil.SizeValue{N: &g.MaxStdinSize}, "max-stdin-size", "most read of standard input (\"-\") in all (bytes, or with KiB, MiB, GiB; 0: no limit)")
	pf.StringVar(&g.ImageLimits, "image-limits", "", "limits on images pulled or built, KEY=SIZE,... (manifest, config, blob, extract, uncompressed, entries, depth; see docs/images.md)")
	pf.BoolVar(&g.FollowExternalSymlinks, "follow-external-symlinks", false, "follow symbolic links that lead out of a catalog or bundle directory, as upstream opm does (refused by default)")
	for _, name := range []string{"max-file-size", "max-stdin-size", "image-limits", "follow-external-symlinks"} {
		_ = pf.SetAnnotation(name, ownGlobalFlag, []string{"true"})
	}
	cmd.PersistentPreRun = func(c *cobra.Command, _ []string) {
		if f := c.Flags().Lookup("skip-tls"); f != nil && f.Changed {
			fmt.Fprintln(ios.ErrOut, "Flag --skip-tls has been deprecated, use --use-http and --skip-tls-verify instead")
		}
		ctx := declcfg.WithMaxFileSize(c.Context(), g.MaxFileSize)
		ctx = declcfg.WithMaxStdinSize(ctx, g.MaxStdinSize)
		c.SetContext(declcfg.WithFollowExternalSymlinks(ctx, g.FollowExternalSymlinks))
	}

	alpha := &cobra.Command{
		Use:    "alpha",
		Short:  "Run an alpha subcommand",
		Hidden: os.Getenv("HELP_ALPHA") != "true",
		Args:   cobra.ArbitraryArgs,
		RunE:   runEmpty,
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
	cmd.InitDefaultHelpCmd()
	cmd.InitDefaultCompletionCmd()
	configureHelp(cmd)
	configureAlphaFlags(cmd)
	configureGroups(cmd)
	cmd.SetUsageTemplate(usageTemplate)
	wrapArgErrors(cmd)
	checkFlagsFirst(cmd)
	cmdutil.CompleteEnumFlags(cmd)
	return cmd
}

// checkFlagsFirst makes missing required flags and broken flag groups
// (MarkFlagRequired, MarkFlagsMutuallyExclusive) usage errors. Cobra checks
// them after the PreRun hooks and returns plain errors (exit 1); each
// command's PreRun now checks them first. A PreRun hook rather than the
// root's PersistentPreRun, which a subcommand's own would replace.
func checkFlagsFirst(cmd *cobra.Command) {
	if cmd.Runnable() {
		preE, pre := cmd.PreRunE, cmd.PreRun
		cmd.PreRun = nil
		cmd.PreRunE = func(c *cobra.Command, args []string) error {
			if err := c.ValidateRequiredFlags(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			if err := c.ValidateFlagGroups(); err != nil {
				return &cmdutil.FlagError{Err: err}
			}
			switch {
			case preE != nil:
				return preE(c, args)
			case pre != nil:
				pre(c, args)
			}
			return nil
		}
	}
	for _, c := range cmd.Commands() {
		checkFlagsFirst(c)
	}
}

// configureHelp makes `opm help <unknown>` the usage error an unknown
// command is (cobra printed the root's help and exited 0).
func configureHelp(root *cobra.Command) {
	h, _, err := root.Find([]string{"help"})
	if err != nil || h == nil || h.Name() != "help" || h.Run == nil {
		return
	}
	show := h.Run
	h.Run = nil
	h.RunE = func(c *cobra.Command, args []string) error {
		target, rest, err := c.Root().Find(args)
		if err == nil && target != nil && len(rest) > 0 && target.HasSubCommands() {
			return unknownCommand(target, rest[0])
		}
		show(c, args)
		return nil
	}
}

// runEmpty is the Run of opm and opm alpha: alone they print nothing and
// succeed, as upstream; an argument is an unknown command.
func runEmpty(c *cobra.Command, args []string) error {
	if len(args) > 0 {
		return unknownCommand(c, args[0])
	}
	return nil
}

// ownGlobalFlag annotates the global flags upstream opm does not have.
// Every help lists them under Global Flags, but for the help a group
// command prints when run alone (upstream's output: see upstreamHelp).
const ownGlobalFlag = "opm-own-global"

// upstreamHelp is set on a command while it prints the help upstream
// prints when that command is run alone (opm generate, opm alpha
// convert-template, ...): then Global Flags lists upstream's global flags
// only, so that the output is upstream's byte for byte.
const upstreamHelp = "opm-upstream-help"

// groupCommand annotates the commands configureGroups makes runnable only
// to refuse unknown subcommands; their help shows no usage line of their
// own, as upstream's (which are not runnable) do.
const groupCommand = "opm-group"

func init() {
	cobra.AddTemplateFunc("showUseLine", func(c *cobra.Command) bool {
		return c.Runnable() && c.Annotations[groupCommand] == ""
	})
	cobra.AddTemplateFunc("globalFlags", func(c *cobra.Command) *pflag.FlagSet {
		fs := pflag.NewFlagSet(c.Name(), pflag.ContinueOnError)
		c.InheritedFlags().VisitAll(func(f *pflag.Flag) {
			if c.Annotations[upstreamHelp] == "" || f.Annotations[ownGlobalFlag] == nil {
				fs.AddFlag(f)
			}
		})
		if !fs.HasAvailableFlags() {
			return nil
		}
		return fs
	})
}

// usageTemplate is cobra's default usage template with two changes: the
// usage line follows showUseLine, and Global Flags are globalFlags.
const usageTemplate = `Usage:{{if showUseLine .}}
  {{.UseLine}}{{end}}{{if .HasAvailableSubCommands}}
  {{.CommandPath}} [command]{{end}}{{if gt (len .Aliases) 0}}

Aliases:
  {{.NameAndAliases}}{{end}}{{if .HasExample}}

Examples:
{{.Example}}{{end}}{{if .HasAvailableSubCommands}}{{$cmds := .Commands}}{{if eq (len .Groups) 0}}

Available Commands:{{range $cmds}}{{if (or .IsAvailableCommand (eq .Name "help"))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{else}}{{range $group := .Groups}}

{{.Title}}{{range $cmds}}{{if (and (eq .GroupID $group.ID) (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{if not .AllChildCommandsHaveGroup}}

Additional Commands:{{range $cmds}}{{if (and (eq .GroupID "") (or .IsAvailableCommand (eq .Name "help")))}}
  {{rpad .Name .NamePadding }} {{.Short}}{{end}}{{end}}{{end}}{{end}}{{end}}{{if .HasAvailableLocalFlags}}

Flags:
{{.LocalFlags.FlagUsages | trimTrailingWhitespaces}}{{end}}{{with globalFlags .}}

Global Flags:
{{.FlagUsages | trimTrailingWhitespaces}}{{end}}{{if .HasHelpSubCommands}}

Additional help topics:{{range .Commands}}{{if .IsAdditionalHelpTopicCommand}}
  {{rpad .CommandPath .CommandPathPadding}} {{.Short}}{{end}}{{end}}{{end}}{{if .HasAvailableSubCommands}}

Use "{{.CommandPath}} [command] --help" for more information about a command.{{end}}
`

// configureGroups makes every other command that only groups subcommands
// (opm generate, opm alpha list, opm completion, ...) print its help when
// run alone, and refuse anything else as a usage error naming the nearest
// subcommand. Left to cobra, such a command prints its help and exits 0
// for any argument, so `opm completion tcsh` looked like a success.
func configureGroups(cmd *cobra.Command) {
	if !cmd.Runnable() && cmd.HasSubCommands() {
		cmd.Args = cobra.ArbitraryArgs
		if cmd.Annotations == nil {
			cmd.Annotations = map[string]string{}
		}
		cmd.Annotations[groupCommand] = "true"
		cmd.RunE = func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				// The help upstream prints here, on stdout, is output
				// scripts may read: byte for byte upstream's.
				c.Annotations[upstreamHelp] = "true"
				defer delete(c.Annotations, upstreamHelp)
				return c.Help()
			}
			return unknownCommand(c, args[0])
		}
	}
	for _, c := range cmd.Commands() {
		configureGroups(c)
	}
}

// unknownCommand is cobra's unknown-command error as a usage error, with
// its "did you mean" suggestions.
func unknownCommand(c *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if s := c.SuggestionsFor(name); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t") + "\n"
	}
	return &cmdutil.FlagError{Err: errors.New(msg)}
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
		msg := err.Error()
		if cause := context.Cause(ctx); cause != nil && errors.Is(err, context.Canceled) && !strings.Contains(msg, cause.Error()) {
			// Ctrl-C or SIGTERM: say why the work stopped ("interrupt
			// signal received"), where the error does not.
			msg += " (" + cause.Error() + ")"
		}
		fmt.Fprintf(ios.ErrOut, "Error: %s\n", msg)
		if declcfg.IsMaxFileSizeError(err) {
			fmt.Fprintln(ios.ErrOut, "The limit is set with --max-file-size.")
		}
		var fe *cmdutil.FlagError
		if errors.As(err, &fe) {
			c, _, ferr := cmd.Find(args)
			if ferr != nil || c == nil || c.Name() == "help" {
				// `opm help x` is about the command x names, not about help.
				c = cmd
			}
			fmt.Fprintf(ios.ErrOut, "Run '%s --help' for usage.\n", c.CommandPath())
		}
	}
	return cmdutil.ExitCode(err)
}
