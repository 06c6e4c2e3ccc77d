// Package imagebuild assembles catalog and bundle images from directories,
// with no container engine and reproducibly: the same input gives the same
// digest on any machine.
//
// A layer ([BuildLayer]) holds directory trees at chosen places of the
// image filesystem, as a Dockerfile's COPY would (every file, directories
// and symbolic links), with everything that depends on the machine
// normalised away: entries in lexical order (a directory before its
// contents), owner 0:0 with no names, mode 0755 for directories and for
// files with the owner's execute bit, 0644 for other files, 0777 for links,
// and one modification time ([Epoch]: SOURCE_DATE_EPOCH, or the Unix epoch).
// The tar stream is compressed with the standard library's gzip at its
// default level, with a zero header time.
//
// Reading a directory is treated as reading hostile input: every read goes
// through an os.Root, so no link leads out of the directory; a symbolic link
// must be relative and resolve inside the tree it is copied with (a dangling
// link is refused); named pipes, sockets and devices are refused without
// being opened for a blocking read; files, bytes, entries and path depth are
// bounded by image.Limits (the limits the image reader applies, so what is
// built can be read back); a file that changes size while it is read fails
// the build; every walk honours its context.
//
// [Catalog] and [Bundle] put the layer on a base image (a registry image,
// an OCI layout or archive, opened with image.Session.OpenBase) or on
// scratch, and set the config's labels, entrypoint and command as the
// caller says (pkg/action/build says what the Dockerfiles upstream
// generates say). The config's creation time is the build's time, not the
// wall clock, unless the caller sets another.
package imagebuild
