package declcfg

// Blobs one at a time, in stream order: what catalog templates need (their
// entries are blobs inside another document, and convert-template keeps
// the order of its input).

// WalkMetas decodes data, a YAML or JSON stream read exactly as LoadReader
// reads it, and calls fn with every blob in order. name is used in
// positions. A document that decodes to null (e.g. only comments) is
// passed as a Meta whose Blob is "null", as upstream's reader does.
func WalkMetas(data []byte, name string, fn func(Meta) error) error {
	return decodeStream(data, name, func(n normalized, line, col int) error {
		m := Meta{Schema: n.schema, Package: n.pkg, Name: n.name, Blob: n.blob, Pos: Position{File: name, Line: line, Column: col}}
		if !n.hasKeys && m.Blob == nil {
			m.Blob = []byte("null")
		}
		return fn(m)
	})
}

// NewMeta normalises one JSON value as upstream's Meta.UnmarshalJSON does
// (sorted keys, compact, no HTML escaping, numbers through float64;
// schema, package and name found case-insensitively). Errors carry
// upstream's wording. pos is recorded in the Meta.
func NewMeta(raw []byte, pos Position) (Meta, error) {
	n, err := normalizeValue(raw)
	if err != nil {
		return Meta{}, err
	}
	return Meta{Schema: n.schema, Package: n.pkg, Name: n.name, Blob: n.blob, Pos: pos}, nil
}

// LoadMetas sorts blobs into a DeclarativeConfig, as upstream's LoadSlice:
// known schemas are decoded into their types (with upstream's error
// wording, positioned at the blob), others are kept as they are.
func LoadMetas(metas []Meta) (*DeclarativeConfig, error) {
	cfg := &DeclarativeConfig{}
	for _, m := range metas {
		n := normalized{blob: m.Blob, schema: m.Schema, pkg: m.Package, name: m.Name, hasKeys: true}
		if err := cfg.addBlob(n, m.Pos); err != nil {
			return nil, &LoadError{Pos: m.Pos, Err: err}
		}
	}
	return cfg, nil
}
