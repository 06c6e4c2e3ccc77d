package index

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/cmd/opm/internal/cmdutil"
	"github.com/opmkit/opm/pkg/action"
	indexaction "github.com/opmkit/opm/pkg/action/index"
	"github.com/opmkit/opm/pkg/render"
)

// What the index commands share: upstream's container tool flags
// (accepted, checked as upstream checks them, not used), where the catalog
// goes (--tag, or --generate and its files), registry access, and the
// note that says the result is a file-based catalog.

// toolSet says which of upstream's container tool flags a command has.
type toolSet int

const (
	// allTools: --container-tool, --build-tool, --pull-tool (add, rm,
	// deprecatetruncate).
	allTools toolSet = iota
	// containerToolOnly: --container-tool, default podman (prune,
	// prune-stranded).
	containerToolOnly
)

// toolFlags are upstream's container tool flags.
type toolFlags struct {
	set                    toolSet
	container, build, pull string
}

func (t *toolFlags) bind(cmd *cobra.Command, set toolSet) {
	t.set = set
	f := cmd.Flags()
	if set == containerToolOnly {
		f.StringVarP(&t.container, "container-tool", "c", "podman", "Accepted for compatibility and not used: opm builds and pushes images itself, with no container engine (one of: docker, podman)")
		return
	}
	f.StringVarP(&t.container, "container-tool", "c", "", "Accepted for compatibility and not used: opm builds and pushes images itself, with no container engine (one of: docker, podman)")
	f.StringVarP(&t.build, "build-tool", "u", "", "Accepted for compatibility and not used (one of: docker, podman)")
	f.StringVarP(&t.pull, "pull-tool", "p", "", "Accepted for compatibility and not used: opm pulls images itself (one of: none, docker, podman)")
}

// check is upstream's check of the tool flags. It returns the flags the
// command line set, for the note that says they were not used.
func (t *toolFlags) check(cmd *cobra.Command) ([]string, error) {
	oneOf := func(flag, v string, ok ...string) error {
		if slices.Contains(ok, v) {
			return nil
		}
		return cmdutil.FlagErrorf("invalid --%s %q: one of %s", flag, v, strings.Join(ok, ", "))
	}
	if t.set == containerToolOnly {
		if t.container == "none" {
			return nil, cmdutil.FlagErrorf("none is not a valid container-tool for %s", cmd.CommandPath())
		}
		if err := oneOf("container-tool", t.container, "docker", "podman"); err != nil {
			return nil, err
		}
	} else {
		if t.build == "none" {
			return nil, cmdutil.FlagErrorf("none is not a valid build-tool for %s", cmd.CommandPath())
		}
		if t.container != "" && (t.build != "" || t.pull != "") {
			return nil, cmdutil.FlagErrorf("--container-tool cannot be set alongside --pull-tool or --build-tool")
		}
		for _, f := range []struct{ flag, v string }{{"container-tool", t.container}, {"build-tool", t.build}} {
			if f.v != "" {
				if err := oneOf(f.flag, f.v, "docker", "podman"); err != nil {
					return nil, err
				}
			}
		}
		if t.pull != "" {
			if err := oneOf("pull-tool", t.pull, "none", "docker", "podman"); err != nil {
				return nil, err
			}
		}
	}
	var set []string
	for _, name := range []string{"container-tool", "build-tool", "pull-tool"} {
		if f := cmd.Flags().Lookup(name); f != nil && f.Changed {
			set = append(set, "--"+name+" "+f.Value.String())
		}
	}
	return set, nil
}

// outputFlags say where the catalog goes, and how images are pulled.
type outputFlags struct {
	out           indexaction.Output
	tag           string
	cafile, cache string
	debug         bool
	tools         toolFlags
}

func (o *outputFlags) bind(cmd *cobra.Command, tools toolSet) {
	f := cmd.Flags()
	f.StringVarP(&o.tag, "tag", "t", "", "Where to push the catalog image: HOST/REPO[:TAG], oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:REPO:TAG]")
	f.StringVarP(&o.out.BinaryImage, "binary-image", "i", "", "Base image of the catalog image, holding /bin/opm (default quay.io/operator-framework/opm:latest; self for an image of this opm)")
	f.BoolVar(&o.out.Generate, "generate", false, "Write the catalog directory and its Dockerfile instead of building the image")
	f.StringVarP(&o.out.OutDockerfile, "out-dockerfile", "d", "", "Name of the Dockerfile --generate writes (default index.Dockerfile)")
	f.StringVar(&o.out.CatalogDir, "catalog-dir", "", "Catalog directory --generate writes (default index)")
	f.BoolVar(&o.out.Overwrite, "overwrite", false, "Let --generate replace an existing catalog directory and Dockerfile")
	f.BoolVar(&o.debug, "debug", false, "Accepted for compatibility")
	_ = f.MarkHidden("debug")
	f.StringVar(&o.cafile, "ca-file", "", "PEM file of certificate authorities to trust for registries")
	f.StringVar(&o.cache, "cache-dir", "", "Directory of the image layer cache (default: the user cache directory)")
	o.tools.bind(cmd, tools)
}

// prepare checks the tool flags and fills the output and registry
// options; it returns the tool flags set, for the note.
func (o *outputFlags) prepare(cmd *cobra.Command, ios *cmdutil.IOStreams, g *cmdutil.GlobalOptions) (render.RegistryOptions, []string, error) {
	tools, err := o.tools.check(cmd)
	if err != nil {
		return render.RegistryOptions{}, nil, err
	}
	reg, err := g.Registry(ios)
	if err != nil {
		return render.RegistryOptions{}, nil, err
	}
	reg.CAFile, reg.CacheDir = o.cafile, o.cache
	if o.tag != "" {
		o.out.Build.Tags = []string{o.tag}
	}
	o.out.Build.SourceDateEpoch = os.Getenv("SOURCE_DATE_EPOCH")
	return reg, tools, nil
}

// finish prints the note on stderr and the image's digest on stdout.
func (o *outputFlags) finish(ios *cmdutil.IOStreams, cmd *cobra.Command, fromIndex string, fromSQLite bool, w indexaction.Written, tools []string) {
	fmt.Fprintln(ios.ErrOut, note(cmd.CommandPath(), fromIndex, fromSQLite, o.out, w, tools))
	if w.Image != nil {
		fmt.Fprintln(ios.Out, w.Image.Digest)
	}
}

// note is the one line that says the result is a file-based catalog,
// where it went, and which flags were not used.
func note(command, fromIndex string, fromSQLite bool, o indexaction.Output, w indexaction.Written, tools []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "note: %s builds file-based catalogs (FBC), not sqlite indexes", command)
	if fromSQLite {
		fmt.Fprintf(&b, " (the sqlite index %s was migrated to FBC)", fromIndex)
	}
	if o.Generate {
		fmt.Fprintf(&b, ": wrote the catalog to %s/ and %s (not database/index.db); 'opm build catalog %s -t IMAGE' builds its image with no container engine", w.Files[0], w.Files[1], w.Files[0])
	} else {
		fmt.Fprintf(&b, ": pushed the catalog image to %s; to keep the catalog as a directory, run with --generate (or 'opm migrate %s DIR')", o.Build.Tags[0], o.Build.Tags[0])
	}
	switch len(tools) {
	case 0:
	case 1:
		fmt.Fprintf(&b, "; %s was not used", tools[0])
	default:
		fmt.Fprintf(&b, "; %s were not used", strings.Join(tools, ", "))
	}
	return b.String()
}

// usage turns the action's usage errors into flag errors (exit 2).
func usage(err error) error {
	var ue *action.UsageError
	if errors.As(err, &ue) {
		return &cmdutil.FlagError{Err: err}
	}
	return err
}
