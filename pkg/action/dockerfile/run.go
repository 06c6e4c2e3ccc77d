package dockerfile

import (
	"context"
	// Registers sha256 for go-digest, which the model's image pull-spec
	// checks need.
	_ "crypto/sha256"
	"errors"
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/model"
)

// RunOptions are what `opm generate dockerfile` is given.
type RunOptions struct {
	// Root is the catalog directory.
	Root         string
	BaseImage    string
	BuilderImage string
	// BinaryImage is the deprecated --binary-image; when set it is the base
	// image, and also the builder image unless BuilderImageSet.
	BinaryImage     string
	BuilderImageSet bool
	// ExtraLabels are key=value strings; a later duplicate key wins.
	ExtraLabels  []string
	SkipValidate bool
}

// Result says where the Dockerfile was written.
type Result struct {
	Path string
}

// Run writes <root>.Dockerfile beside the catalog directory. The checks run
// in upstream's order: the builder image, the labels, an existing
// Dockerfile (before the catalog itself), the catalog directory; then the
// catalog is validated unless SkipValidate.
func Run(ctx context.Context, opts RunOptions) (*Result, error) {
	gen := Options{BaseImage: opts.BaseImage, BuilderImage: opts.BuilderImage}
	if opts.BinaryImage != "" {
		gen.BaseImage = opts.BinaryImage
		if !opts.BuilderImageSet {
			gen.BuilderImage = opts.BinaryImage
		}
	}
	if err := gen.Check(); err != nil {
		return nil, err
	}
	labels, err := ParseLabels(opts.ExtraLabels)
	if err != nil {
		return nil, err
	}
	gen.ExtraLabels = labels

	name, path, err := Paths(opts.Root)
	if err != nil {
		return nil, err
	}
	gen.IndexDir = name
	if err := EnsureNotExist(path); err != nil {
		return nil, err
	}
	if err := CheckRoot(opts.Root); err != nil {
		return nil, err
	}
	if !opts.SkipValidate {
		if err := validateCatalog(ctx, opts.Root); err != nil {
			return nil, fmt.Errorf("%w\n(no Dockerfile written; use --skip-validate to write one anyway)", err)
		}
	}
	if err := WriteNew(path, []byte(Render(gen))); err != nil {
		return nil, err
	}
	return &Result{Path: path}, nil
}

// validateCatalog loads the catalog and checks it with upstream's rules, as
// `opm validate` does. A rule that stops the conversion is prefixed with the
// position of the blob it is about.
func validateCatalog(ctx context.Context, root string) error {
	cfg, err := declcfg.LoadDir(ctx, root)
	if err != nil {
		return fmt.Errorf("invalid catalog %q: %w", root, err)
	}
	if _, err := model.ConvertToModel(*cfg); err != nil {
		var re *model.RuleError
		if errors.As(err, &re) && re.Pos.IsValid() {
			return fmt.Errorf("invalid catalog %q: %s: %w", root, re.Pos, err)
		}
		return fmt.Errorf("invalid catalog %q: %w", root, err)
	}
	return nil
}
