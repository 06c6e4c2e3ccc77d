// Package image opens container images from registries, OCI image layouts
// and docker or OCI archives, reads their labels, and extracts chosen paths
// of their filesystem safely, with no container engine.
//
// References:
//
//	registry.example.com/repo:tag     a registry image (docker://REF also works)
//	registry.example.com/repo@sha256:…
//	oci:DIR[:TAG|@DIGEST]             an OCI image layout directory
//	oci-archive:FILE[:TAG|@DIGEST]    a tarred OCI image layout
//	docker-archive:FILE[:REPO:TAG]    a `docker save` tarball
//
// Registry references must name their registry, as upstream opm requires.
// A reference written as a path (starting with /, ./, ../ or ~, or naming
// an existing file) is never a registry reference ([PathError]).
// Multi-platform indexes resolve to linux/<host arch>, or to [WithPlatform].
//
// # Hostile input
//
// Every image is taken to be hostile:
//
//   - Sizes are bounded ([Limits]): manifests, configs, layers, bytes
//     written and read by an extraction, entries, path depth. A registry
//     blob is read up to the size its descriptor declares and no further,
//     so an endless or oversized stream ends in a digest error; manifests
//     are cut off at the manifest limit.
//   - Every blob is verified against its digest and size on every path
//     (registry, cache, layout, archive), whatever its size; docker archive
//     layers are verified against the config's diff_ids.
//   - Local files are opened only when they are regular files: a FIFO or
//     device in a layout, an archive or the cache is refused (or, in the
//     cache, treated as a miss) without being read.
//   - Every long read honours its context, so Ctrl-C stops it.
//   - [Image.Extract] writes through an os.Root, applies layers in order
//     with whiteouts, refuses entries that climb out, and at the end
//     resolves every symbolic link physically inside the destination: one
//     that leads out (however it is chained) fails the extraction. Files
//     are written 0600 and directories 0700. Callers read what was
//     extracted through an os.Root as well ((*os.Root).FS), so a link can
//     never reach a host file.
//
// # The blob cache
//
// Registry blobs (configs and layers) are kept in a content-addressed cache
// ([WithCacheDir]), so an unchanged image is downloaded once. Entries are
// written to a temporary file and renamed into place after verification;
// they are verified again while they are read, and a corrupted, swapped or
// special-file entry is a miss that is downloaded again. Processes sharing
// a cache take a per-blob lock (flock), so a blob is downloaded once.
//
// # Why local images are not read with go-containerregistry
//
// Registry access uses go-containerregistry (pkg/v1/remote), as do the
// tests, which build every crafted image with it. Layouts and archives are
// read by this package's own code rather than by pkg/v1/layout and
// pkg/v1/tarball (v0.22.1), because for hostile input those:
//
//   - read index.json with os.ReadFile: no size bound, a symbolic link to a
//     host file (or /dev/zero) is followed, and a FIFO blocks forever
//     (layout_test.go: TestGGCRLayoutIndexFollowsLinks, TestGGCRLayoutIndexFIFO);
//   - return layout blobs unverified: a tampered blob is read without error
//     (TestGGCRLayoutBlobUnverified), where we check digest and size;
//   - trust a docker archive's diff_ids without hashing its uncompressed
//     layers (TestGGCRTarballLayerUnverified), where we hash every layer;
//   - read a docker archive's manifest.json and config with no size bound,
//     and rescan the whole archive for every file they open, where we index
//     it once (headers only) and read entries through section readers;
//   - take no context, so a long read cannot be cancelled.
//
// Each case is tested against our code in layout_test.go. We do use their
// types: v1.ParseIndexManifest, v1.ParseManifest, v1.ParseConfigFile and
// tarball.Manifest.
package image
