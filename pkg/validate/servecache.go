package validate

// Rule codes of the serve cache check (`opm validate --check-cache`, run
// by the validate action with pkg/action/serve and passed in
// Options.Extra): a catalog image's serve caches must hold what its
// catalog does.
const (
	// CodeServeCacheMismatch is a serve cache that does not hold what the
	// catalog does: the image's server would answer with another catalog
	// than the one its configs directory shows (an error).
	CodeServeCacheMismatch = "serve-cache-mismatch"
	// CodeServeCacheNotChecked is a serve cache that could not be checked
	// (written by another opm version, upstream's pogreb format, or a
	// catalog the server refuses).
	CodeServeCacheNotChecked = "serve-cache-not-checked"
)

func init() {
	Rules = append(Rules,
		Rule{Code: CodeServeCacheMismatch, Summary: "Serve cache (--check-cache): a cache the image's server answers from does not hold what its catalog does (an error)."},
		Rule{Code: CodeServeCacheNotChecked, Summary: "Serve cache (--check-cache): a cache could not be checked against the catalog."},
	)
}
