// Package schemas embeds opm's CUE schemas for file-based catalog blobs: the
// _Meta envelope every blob has, the four olm.* blob schemas and the known
// property types. pkg/validate evaluates them with cuelang.org/go.
//
// Every file is in package schemas and the files are built together. The
// entry points are #Blobs (schema name to the definition a blob of that
// schema must satisfy) and #PropertyValues (property type to the definition
// its value must satisfy). A user's own schemas (`opm validate
// --schema-dir`) are built together with these files and add their
// definitions to #Custom.
package schemas

import "embed"

// FS holds the embedded *.cue files.
//
//go:embed *.cue
var FS embed.FS
