package validate

import (
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"

	"github.com/opmkit/opm/schemas"
)

// Schemas are the CUE schemas blobs are checked against: opm's embedded
// ones and, optionally, a user's own (see [LoadSchemas]).
type Schemas struct {
	files []*source
	// custom reports whether user files were given.
	custom bool
	// pool keeps compiled copies for reuse across validations.
	pool pool
}

type source struct {
	name string
	data []byte
}

// LoadSchemas reads the embedded schemas and every *.cue file directly in
// userDir (none when userDir is ""). User files are built together with
// the embedded ones, so they can use #Property, #GVKValue and the like, and
// add the definitions of their own blob schemas to #Custom:
//
//	#Custom: "example.com.widget": {schema!: "example.com.widget", size!: int & >0, ...}
//
// The schemas are compiled once here to report errors early.
func LoadSchemas(userDir string) (*Schemas, error) {
	s := &Schemas{}
	err := fs.WalkDir(schemas.FS, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || path.Ext(p) != ".cue" {
			return err
		}
		data, err := fs.ReadFile(schemas.FS, p)
		if err != nil {
			return err
		}
		s.files = append(s.files, &source{name: "schemas/" + p, data: data})
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading embedded schemas: %w", err)
	}
	if userDir != "" {
		entries, err := os.ReadDir(userDir)
		if err != nil {
			return nil, fmt.Errorf("reading schema directory: %w", err)
		}
		var names []string
		for _, e := range entries {
			if !e.IsDir() && filepath.Ext(e.Name()) == ".cue" {
				names = append(names, e.Name())
			}
		}
		sort.Strings(names)
		if len(names) == 0 {
			return nil, fmt.Errorf("schema directory %s holds no .cue files", userDir)
		}
		for _, n := range names {
			p := filepath.Join(userDir, n)
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("reading schema: %w", err)
			}
			s.files = append(s.files, &source{name: p, data: data})
		}
		s.custom = true
	}
	c, err := s.compile()
	if err != nil {
		return nil, err
	}
	s.pool.s = s
	s.pool.put(c)
	return s, nil
}

// compiled is the schemas built in one cue.Context. A cue.Context is not
// meant for concurrent evaluation, so every worker compiles its own.
type compiled struct {
	ctx        *cue.Context
	blobs      cue.Value
	custom     cue.Value
	properties cue.Value
	// lifecycle is #Lifecycle (the release gate's lifecycle-invalid).
	lifecycle cue.Value
	// defs caches lookups of #Blobs, #Custom and #PropertyValues entries.
	defs map[string]cue.Value
	// shapeOK caches, per definition and shape (see shapeOf), whether
	// the built-in schemas accept values of that shape.
	shapeOK map[string]bool
}

func (s *Schemas) compile() (*compiled, error) {
	file := &ast.File{}
	var imports []ast.Decl
	seenImport := map[string]bool{}
	var body []ast.Decl
	for _, src := range s.files {
		f, err := parser.ParseFile(src.name, src.data, parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parsing schema: %s", cueerrors.Details(err, nil))
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.Package:
			case *ast.ImportDecl:
				for _, spec := range d.Specs {
					if seenImport[spec.Path.Value] {
						continue
					}
					seenImport[spec.Path.Value] = true
					imports = append(imports, &ast.ImportDecl{Specs: []*ast.ImportSpec{spec}})
				}
			default:
				body = append(body, d)
			}
		}
	}
	file.Decls = append(imports, body...)
	ctx := cuecontext.New()
	v := ctx.BuildFile(file)
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("building schemas: %s", strings.TrimSpace(cueerrors.Details(err, nil)))
	}
	c := &compiled{
		ctx:        ctx,
		blobs:      v.LookupPath(cue.ParsePath("#Blobs")),
		custom:     v.LookupPath(cue.ParsePath("#Custom")),
		properties: v.LookupPath(cue.ParsePath("#PropertyValues")),
		lifecycle:  v.LookupPath(cue.ParsePath("#Lifecycle")),
		defs:       map[string]cue.Value{},
		shapeOK:    map[string]bool{},
	}
	for _, x := range []cue.Value{c.blobs, c.custom, c.properties, c.lifecycle} {
		if err := x.Err(); err != nil {
			return nil, fmt.Errorf("building schemas: %s", strings.TrimSpace(cueerrors.Details(err, nil)))
		}
	}
	return c, nil
}

// def returns the definition for key in table (one of the three roots), or
// false when there is none.
func (c *compiled) def(table cue.Value, kind, key string) (cue.Value, bool) {
	ck := kind + "\x00" + key
	if v, ok := c.defs[ck]; ok {
		return v, v.Exists()
	}
	v := table.LookupPath(cue.MakePath(cue.Str(key)))
	if !v.Exists() {
		// A pattern constraint such as [string]: _ makes every key
		// "exist"; only keys a file declares count.
		v = cue.Value{}
	}
	c.defs[ck] = v
	return v, v.Exists()
}

// schemaError is one CUE failure: a path inside the checked value and a
// message.
type schemaError struct {
	Path    string
	Message string
}

// check unifies the JSON data with def and returns its errors.
func (c *compiled) check(def cue.Value, data []byte) []schemaError {
	v := c.ctx.CompileBytes(data)
	if err := v.Err(); err != nil {
		return []schemaError{{Message: err.Error()}}
	}
	u := def.Unify(v)
	err := u.Validate(cue.Concrete(true))
	if err == nil {
		return nil
	}
	// One error per path: CUE reports a failed disjunction as a summary
	// ("2 errors in empty disjunction:") followed by each alternative's
	// conflict; keep the conflicts, joined.
	byPath := map[string][]string{}
	for _, e := range cueerrors.Errors(err) {
		format, args := e.Msg()
		msg := fmt.Sprintf(format, args...)
		if strings.HasSuffix(msg, "errors in empty disjunction:") {
			continue
		}
		path := strings.Join(e.Path(), ".")
		if !slices.Contains(byPath[path], msg) {
			byPath[path] = append(byPath[path], msg)
		}
	}
	var out []schemaError
	for path, msgs := range byPath {
		sort.Strings(msgs)
		out = append(out, schemaError{Path: path, Message: strings.Join(msgs, "; ")})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// pool hands out compiled schemas, one per concurrent user.
type pool struct {
	s    *Schemas
	mu   sync.Mutex
	free []*compiled
}

func (p *pool) get() (*compiled, error) {
	p.mu.Lock()
	if n := len(p.free); n > 0 {
		c := p.free[n-1]
		p.free = p.free[:n-1]
		p.mu.Unlock()
		return c, nil
	}
	p.mu.Unlock()
	return p.s.compile()
}

func (p *pool) put(c *compiled) {
	p.mu.Lock()
	p.free = append(p.free, c)
	p.mu.Unlock()
}
