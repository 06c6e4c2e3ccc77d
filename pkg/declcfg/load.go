package declcfg

import (
	"context"
	"errors"
)

// LoadDir loads the FBC rooted at dir.
func LoadDir(ctx context.Context, dir string, opts ...LoadOption) (*DeclarativeConfig, error) {
	return nil, errors.New("TODO")
}

// LoadOption configures a load.
type LoadOption func(*loadOptions)

type loadOptions struct {
	concurrency int
}
