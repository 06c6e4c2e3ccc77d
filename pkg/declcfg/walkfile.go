package declcfg

// Blob is one blob of a catalog file: its normalised form (sorted keys,
// compact JSON, no HTML escaping, numbers as float64, as upstream's
// WalkMetasFS hands out) and, for the four known schemas, its typed form
// (exactly one of the pointers is set; none for other schemas, which only
// have Meta).
type Blob struct {
	Meta        Meta
	Package     *Package
	Channel     *Channel
	Bundle      *Bundle
	Deprecation *Deprecation
}

// WalkFile decodes data, one catalog file named name in positions, exactly
// as the loader does, and calls fn with each blob in document order. It
// fails as the loader fails, at the first bad blob, with a *LoadError.
// A Blob's Meta.Blob is its own allocation; the typed form may alias it.
// Callers that keep only part of each blob can so process a file without
// holding all of its blobs at once.
func WalkFile(data []byte, name string, fn func(Blob) error) error {
	return decodeStream(data, name, func(n normalized, line, col int) error {
		pos := Position{File: name, Line: line, Column: col}
		var cfg DeclarativeConfig
		if err := cfg.addBlob(n, pos); err != nil {
			return &LoadError{Pos: pos, Err: err}
		}
		b := Blob{Meta: Meta{Schema: n.schema, Package: n.pkg, Name: n.name, Blob: n.blob, Pos: pos}}
		switch {
		case len(cfg.Packages) == 1:
			b.Package = &cfg.Packages[0]
		case len(cfg.Channels) == 1:
			b.Channel = &cfg.Channels[0]
		case len(cfg.Bundles) == 1:
			b.Bundle = &cfg.Bundles[0]
		case len(cfg.Deprecations) == 1:
			b.Deprecation = &cfg.Deprecations[0]
		}
		return fn(b)
	})
}
