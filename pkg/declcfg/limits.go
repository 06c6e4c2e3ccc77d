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
	return safefs.WithLimits(ctx, safefs.Limits{MaxFileSize: n})
}

// MaxFileSize returns the file size limit in force under ctx (<= 0: none).
func MaxFileSize(ctx context.Context) int64 {
	return safefs.LimitsFrom(ctx).MaxFileSize
}
