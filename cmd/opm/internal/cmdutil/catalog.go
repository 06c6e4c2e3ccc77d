package cmdutil

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/internal/suggest"
	"github.com/opmkit/opm/pkg/declcfg"
)

// Choosing the catalog, the one rule of every command that works on a
// catalog (docs: README, "Choosing the catalog"):
//
//   - -C/--catalog CATALOG names it, in every such command;
//   - a command whose arguments are catalogs (opm graph *, opm catalog
//     filter, diff, merge, opm view) also takes it as an argument, and -C
//     counts as that argument: giving both is a usage error (diff and view
//     take OLD first, the catalog second; graph and merge take -C as one
//     more catalog, the first);
//   - without either, the catalog is the current directory, where one
//     catalog is enough (not for merge, which needs two);
//   - the edit verbs (opm catalog promote, ...) take names as arguments,
//     so they take the catalog with -C only.

// CatalogFlag is the name of the flag that names the catalog.
const CatalogFlag = "catalog"

// AddCatalogFlag registers -C/--catalog on cmd, bound to dst (nil when
// only OneCatalog or Catalogs read it), with default def ("." where the
// current directory is the default) and usage what.
func AddCatalogFlag(cmd *cobra.Command, dst *string, def, what string) {
	if dst == nil {
		dst = new(string)
	}
	cmd.Flags().StringVarP(dst, CatalogFlag, "C", def, what)
}

// Catalog is where a command's catalog came from.
type Catalog struct {
	// Refs are the catalogs (one unless the command takes several).
	Refs []string
	// Defaulted is true when none was given: Refs is the current
	// directory.
	Defaulted bool
}

// OneCatalog returns the catalog of a command that reads one: arg (its
// argument, "" when it has none), or -C, or the current directory. Giving
// both an argument and -C is a usage error.
func OneCatalog(cmd *cobra.Command, arg string) (Catalog, error) {
	flag, set := catalogFlag(cmd)
	switch {
	case set && arg != "":
		return Catalog{}, FlagErrorf("the catalog is given twice, as an argument (%s) and with -C (%s): give it once", arg, flag)
	case set:
		return Catalog{Refs: []string{flag}}, nil
	case arg != "":
		return Catalog{Refs: []string{arg}}, nil
	}
	return Catalog{Refs: []string{"."}, Defaulted: true}, nil
}

// Catalogs returns the catalogs of a command that reads several: -C (the
// first) and the arguments; the current directory when there are none and
// need, how many the command needs at least, is 1.
func Catalogs(cmd *cobra.Command, args []string, need int) (Catalog, error) {
	var refs []string
	if flag, set := catalogFlag(cmd); set {
		refs = append(refs, flag)
	}
	refs = append(refs, args...)
	switch {
	case len(refs) == 0 && need <= 1:
		return Catalog{Refs: []string{"."}, Defaulted: true}, nil
	case len(refs) < need:
		return Catalog{}, FlagErrorf("%s needs at least %d catalogs (as arguments, the first one possibly with -C), got %d", cmd.CommandPath(), need, len(refs))
	}
	return Catalog{Refs: refs}, nil
}

func catalogFlag(cmd *cobra.Command) (string, bool) {
	f := cmd.Flags().Lookup(CatalogFlag)
	if f == nil || !f.Changed {
		return "", false
	}
	return f.Value.String(), true
}

// Explain rewrites an error of a command that read c, so that a catalog
// that is not one says so plainly:
//
//   - a directory whose load failed on a file that is not a catalog file
//     (no .json, .yaml or .yml name: a script, a README) is "not a
//     file-based catalog", naming that file;
//   - when no catalog was given, the error says that the current
//     directory was read, and how to name one.
//
// Other errors are returned as they are.
func (c Catalog) Explain(err error) error {
	if err == nil {
		return nil
	}
	note := ""
	if c.Defaulted {
		note = "\nNo catalog was given, so the current directory was read: name one with -C DIR (or as an argument, where the command takes one)."
	}
	var le *declcfg.LoadError
	if errors.As(err, &le) && le.Pos.File != "" && !catalogFileName(le.Pos.File) && !safefs.IsRefusal(le.Err) {
		ref := c.refOf(le.Pos.File)
		if ref == "" {
			return err
		}
		what := fmt.Sprintf("%q", ref)
		why := declcfg.UpstreamMessage(le)
		if i := strings.IndexByte(why, '\n'); i >= 0 {
			why = why[:i] // the JSON decoder's excerpt of the file
		}
		why = strings.TrimSuffix(why, " (indicated by <==)")
		where := le.Pos.File
		if le.Pos.Line > 0 {
			where = fmt.Sprintf("%s (line %d)", where, le.Pos.Line)
		}
		return &explained{err: err, msg: fmt.Sprintf("%s is not a file-based catalog: it holds %s, which is not a catalog file: %s\nA catalog directory holds only catalog files (JSON or YAML blobs with a schema); list any other file in .indexignore.%s", what, where, why, note)}
	}
	var ue *suggest.UnknownError
	if note != "" && (errors.As(err, &ue) || errors.As(err, &le)) {
		return &explained{err: err, msg: err.Error() + note}
	}
	return err
}

// refOf returns the catalog of c, a directory, that holds file, or "".
func (c Catalog) refOf(file string) string {
	f := filepath.Clean(file)
	for _, r := range c.Refs {
		if st, err := os.Stat(r); err != nil || !st.IsDir() {
			continue
		}
		if rel, err := filepath.Rel(filepath.Clean(r), f); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
			return r
		}
	}
	return ""
}

// catalogFileName reports whether a file is named as catalog files are.
func catalogFileName(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

// explained is an error with a clearer message; errors.Is and As still
// see the original.
type explained struct {
	err error
	msg string
}

func (e *explained) Error() string { return e.msg }
func (e *explained) Unwrap() error { return e.err }
