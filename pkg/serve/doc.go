// Package serve indexes a file-based catalog and serves it the way
// upstream `opm serve` does: OLM's gRPC registry API (api.Registry and
// api.ExperimentalRegistry of pkg/api), the grpc.health.v1 health service
// and server reflection, plus, on request, catalogd's HTTP API
// (/api/v1/all and /api/v1/metas).
//
// [Build] reads a catalog once, file by file and blob by blob: it refuses
// what upstream refuses (everything `opm validate` rejects, and custom
// blobs whose schema or package upstream's server rejects), moves the bulky
// parts (bundle manifests, olm.csv.metadata values, custom blobs, the HTTP
// API's JSON lines) to a data file as soon as they are decoded, and keeps an
// [Index] of names, upgrade edges, properties and dependencies in memory.
// Answers are made from the index, reading the data file only for what
// they return (a GetBundle's manifests, a stub CSV made on demand from
// olm.csv.metadata).
//
// Build reads catalog files with the shared loader (declcfg.WalkFS): the
// same checks and limits as render and validate.
//
// An index can be kept in a cache directory ([BuildCache], [OpenCache]); a
// cache records the SHA-256 digest of the catalog's files, the opm version
// and cache format that wrote it, and the digests of its own files under a
// seal, so a stale, foreign or edited cache is detected rather than
// trusted. [NewGRPCServer] applies [Limits] to what clients may hold.
//
// The wire behaviour (ordering, errors and their status codes, what
// GetBundle blanks, the stub CSV's bytes) follows the recorded upstream
// answers of the conformance suite; docs/serve.md describes it.
package serve
