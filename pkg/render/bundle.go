package render

import (
	"context"
	"errors"
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
)

// renderBundleDir renders a bundle directory (manifests/ + metadata/).
func renderBundleDir(ctx context.Context, dir string, opts Options) (*declcfg.DeclarativeConfig, error) {
	return nil, fmt.Errorf("bundle directory %q: %w", dir, errors.New("rendering bundle directories is not supported yet"))
}

// deriveChannels adds olm.package and olm.channel blobs for the rendered
// bundles (--with-channels).
func deriveChannels(cfg *declcfg.DeclarativeConfig) error {
	return errors.New("--with-channels is not supported yet")
}
