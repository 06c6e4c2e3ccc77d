// Package pkginit builds the olm.package blob `opm init` writes.
package pkginit

import (
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/icon"
)

// Options describe the package to create.
type Options struct {
	Name           string
	DefaultChannel string
	Icon           []byte // nil: no icon
	Description    string
}

// New returns the olm.package blob. The icon's media type is detected from
// its content and must be an image. The name is not validated, as upstream.
func New(opts Options) (declcfg.Package, error) {
	pkg := declcfg.Package{
		Schema:         declcfg.SchemaPackage,
		Name:           opts.Name,
		DefaultChannel: opts.DefaultChannel,
		Description:    opts.Description,
	}
	if opts.Icon != nil {
		mime := icon.MediaType(opts.Icon)
		if !icon.IsImage(mime) {
			return declcfg.Package{}, fmt.Errorf("detected invalid type %q: not an image", mime)
		}
		pkg.Icon = &declcfg.Icon{Data: opts.Icon, MediaType: mime}
	}
	return pkg, nil
}
