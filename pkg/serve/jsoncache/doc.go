// Package jsoncache writes the cache upstream `opm serve --cache-dir` reads
// with its JSON backend, and computes and checks that cache's integrity
// digest, so that a catalog image built without a container engine can be
// served from a pre-built cache by upstream's opm: OLM's extractContent pods
// run `opm serve CATALOG --cache-dir=CACHE`, which refuses to start unless
// the cache's digest matches.
//
// The format is upstream's, as ../shared/docs/serve-cache.md records it
// (verified against upstream's binary there):
//
//	DIR/digest                               16 lowercase hex digits, no newline
//	DIR/cache/packages.json                  the package index
//	DIR/cache/<package>_<channel>_<bundle>.json   one api.Bundle per channel membership
//	DIR/cache/metas/<schema>[/<package>]/<h>.json   custom-schema blobs
//
// [Write] makes it from a [serve.Index] built from the catalog (the answers
// are those our server gives, which the conformance suite checks against
// upstream's), and [Digest] is upstream's integrity digest: FNV-1a 64 over a
// tar stream of the catalog directory, then one of DIR/cache, in which
// names, entry types, permission bits, sizes and contents count (owners,
// times and symbolic links do not). A cache therefore stays valid only if
// both trees reach the server with the same names, bytes and modes; [Write]
// takes the modes the trees will have there (an image layer normalises
// them).
//
// Other entries beside cache/ and digest (this toolkit's own opm-serve/
// cache) are ignored by upstream, so one directory can hold both.
package jsoncache
