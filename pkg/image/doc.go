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
// Multi-platform indexes resolve to linux/<host arch>, or to [WithPlatform].
// Registry blobs (configs and layers) are kept in a content-addressed cache
// ([WithCacheDir]) and verified against their digests, so an unchanged image
// is downloaded once.
//
// [Image.Extract] writes only the requested paths, applies layers in order
// with whiteouts, and rejects entries and links that would escape the
// destination. Files are written 0600 and directories 0700.
package image
