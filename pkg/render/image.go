package render

import (
	"context"
	"errors"
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
)

// renderImage pulls ref and renders it as a catalog or bundle image.
func renderImage(ctx context.Context, ref string, opts Options) (*declcfg.DeclarativeConfig, error) {
	return nil, fmt.Errorf("%q is not a directory, and %w", ref, errors.New("rendering image references is not supported yet"))
}
