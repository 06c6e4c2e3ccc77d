// Package initpkg is the action of `opm init`: the olm.package blob of a
// new package, its icon and description read from files.
package initpkg

import (
	"context"
	"fmt"
	"os"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/icon"
)

// Options describe the package to create.
type Options struct {
	Name           string
	DefaultChannel string
	// IconFile is read as the package's icon ("" = no icon). Its media
	// type is detected from its content and must be an image.
	IconFile string
	// DescriptionFile is read verbatim as the description ("" = none).
	DescriptionFile string
}

// Run returns the olm.package blob. The name is not validated, as
// upstream.
func Run(_ context.Context, opts Options) (*declcfg.Package, error) {
	pkg := &declcfg.Package{
		Schema:         declcfg.SchemaPackage,
		Name:           opts.Name,
		DefaultChannel: opts.DefaultChannel,
	}
	var iconData []byte
	if opts.IconFile != "" {
		data, err := os.ReadFile(opts.IconFile)
		if err != nil {
			return nil, fmt.Errorf("read icon: %w", err)
		}
		iconData = data
	}
	if opts.DescriptionFile != "" {
		data, err := os.ReadFile(opts.DescriptionFile)
		if err != nil {
			return nil, fmt.Errorf("read description: %w", err)
		}
		pkg.Description = string(data)
	}
	if iconData != nil {
		mime := icon.MediaType(iconData)
		switch {
		case mime == "":
			return nil, fmt.Errorf("icon %s is not an image: its content is no image format opm knows (PNG, JPEG, GIF, SVG, WebP, ...)", opts.IconFile)
		case !icon.IsImage(mime):
			return nil, fmt.Errorf("icon %s is not an image: its content is %s", opts.IconFile, mime)
		}
		pkg.Icon = &declcfg.Icon{Data: iconData, MediaType: mime}
	}
	return pkg, nil
}
