package image

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// ErrDigest is wrapped by errors for content that does not match its
// digest or declared size.
var ErrDigest = errors.New("content does not match its digest")

// verifier reads exactly size bytes of r, never more, hashing them, and
// fails at the end when they fall short or do not hash to want. It honours
// ctx between reads.
type verifier struct {
	ctx  context.Context
	r    io.Reader
	c    io.Closer
	want v1.Hash
	size int64
	n    int64
	h    hash.Hash
	err  error // sticky
	// bad wraps a mismatch error (the cache marks its entries corrupted).
	bad func(error) error
}

// newVerifier returns a reader of the size bytes of rc that fails at the
// end unless they hash to want. c (may be nil) is closed by Close.
func newVerifier(ctx context.Context, r io.Reader, c io.Closer, want v1.Hash, size int64) (*verifier, error) {
	if want.Algorithm != "sha256" {
		return nil, fmt.Errorf("blob %s: unsupported digest algorithm %q", want, want.Algorithm)
	}
	if size < 0 {
		return nil, fmt.Errorf("blob %s: invalid size %d", want, size)
	}
	return &verifier{ctx: ctx, r: r, c: c, want: want, size: size, h: sha256.New()}, nil
}

func (v *verifier) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	if err := v.ctx.Err(); err != nil {
		return 0, err
	}
	if v.n == v.size {
		if got := hex.EncodeToString(v.h.Sum(nil)); got != v.want.Hex {
			v.err = v.fail(fmt.Errorf("the %d bytes declared hash to sha256:%s, not %s: %w", v.size, got, v.want, ErrDigest))
			return 0, v.err
		}
		v.err = io.EOF
		return 0, io.EOF
	}
	if rem := v.size - v.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	n, err := v.r.Read(p)
	v.h.Write(p[:n])
	v.n += int64(n)
	if err == io.EOF {
		if v.n < v.size {
			v.err = v.fail(fmt.Errorf("truncated: %d of the %d bytes declared: %w", v.n, v.size, ErrDigest))
			return n, v.err
		}
		err = nil
	}
	if err != nil {
		v.err = err
	}
	return n, err
}

func (v *verifier) fail(err error) error {
	if v.bad != nil {
		return v.bad(err)
	}
	return err
}

func (v *verifier) Close() error {
	if v.c == nil {
		return nil
	}
	return v.c.Close()
}

// readExact reads the size bytes of a verifying reader, then the final
// read that checks them.
func readExact(v io.Reader, size int64) ([]byte, error) {
	b := make([]byte, size)
	if _, err := io.ReadFull(v, b); err != nil {
		return nil, err
	}
	if _, err := v.Read(nil); err != io.EOF {
		return nil, err
	}
	return b, nil
}

// ctxReader stops reading when ctx is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
