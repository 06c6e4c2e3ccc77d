package declcfg

import (
	"context"

	"github.com/opmkit/opm/internal/safefs"
)

// DefaultMaxFileSize is the default limit on the size of one catalog file
// or bundle file: 256 MiB.
const DefaultMaxFileSize = safefs.DefaultMaxFileSize

// ErrFileTooLarge is matched (errors.Is) by the error of a file, or of one
// document of a stream, over the size limit.
var ErrFileTooLarge = safefs.ErrTooLarge

// IsMaxFileSizeError reports whether err is over the file size limit that
// WithMaxFileSize sets (and not over a fixed limit on some other file,
// such as a registries.conf file).
func IsMaxFileSizeError(err error) bool { return safefs.IsFileSizeLimit(err) }

// WithMaxFileSize returns a context under which the loaders of this module
// (catalog files, bundle files) refuse a file larger than n bytes, and a
// document or value of a stream larger than n bytes; n <= 0 means no limit.
// Without it the limit is DefaultMaxFileSize.
func WithMaxFileSize(ctx context.Context, n int64) context.Context {
	l := safefs.LimitsFrom(ctx)
	l.MaxFileSize = n
	return safefs.WithLimits(ctx, l)
}

// DefaultMaxStdinSize is the default limit on the whole of standard input
// (LoadReaderContext, IndexReader): 64 MiB.
const DefaultMaxStdinSize = safefs.DefaultMaxStdinSize

// WithMaxStdinSize returns a context under which the stream loaders of
// this module (LoadReaderContext, IndexReader) refuse more than n bytes in
// all; n <= 0 means no limit. Without it the limit is DefaultMaxStdinSize.
func WithMaxStdinSize(ctx context.Context, n int64) context.Context {
	l := safefs.LimitsFrom(ctx)
	l.MaxStdinSize = n
	return safefs.WithLimits(ctx, l)
}

// WithFollowExternalSymlinks returns a context under which the loaders of
// this module follow symbolic links that lead outside a catalog or bundle
// directory (or are absolute), as upstream opm does. Without it such a
// link is an error naming the file (errors.Is(err, ErrEscapes)): a catalog
// from a pull request must not read the files of the machine that checks
// it. Files are still read only when regular and within the size limit.
func WithFollowExternalSymlinks(ctx context.Context, follow bool) context.Context {
	l := safefs.LimitsFrom(ctx)
	l.FollowExternalLinks = follow
	return safefs.WithLimits(ctx, l)
}

// ErrEscapes is matched (errors.Is) by the error of a symbolic link that
// leads outside the directory being read.
var ErrEscapes = safefs.ErrEscapes

// MaxFileSize returns the file size limit in force under ctx (<= 0: none).
func MaxFileSize(ctx context.Context) int64 {
	return safefs.LimitsFrom(ctx).MaxFileSize
}
