package validate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/distribution/reference"

	"github.com/opmkit/opm/internal/ocpversion"
	"github.com/opmkit/opm/internal/safefs"
	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/render"
	"github.com/opmkit/opm/pkg/validate"
)

// The release gate's part of `opm validate`: the policy's layers, the
// target OpenShift version, and the rules about a catalog directory's
// layout.

// resolvePolicy applies the policy (--policy, else the one the catalog's
// configuration names), the catalog's configuration and the command line,
// in this order.
func resolvePolicy(opts Options, cfg *validate.Config) (*validate.Policy, error) {
	var layers []validate.PolicyLayer
	switch {
	case opts.Policy != "":
		chain, err := validate.LoadPolicy(opts.Policy, readPolicyFile)
		if err != nil {
			return nil, err
		}
		layers = chain
	case cfg != nil && cfg.Policy != "":
		root, err := os.OpenRoot(opts.Ref)
		if err != nil {
			return nil, err
		}
		defer root.Close()
		chain, err := validate.LoadPolicy(cfg.Policy, func(file string) ([]byte, error) {
			data, err := safefs.ReadRegular(root, filepath.FromSlash(file), validate.MaxConfigSize)
			if err != nil {
				return nil, safefs.Refusal(err, file)
			}
			return data, nil
		})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(opts.Ref, validate.ConfigFile), err)
		}
		layers = chain
	}
	if cfg != nil {
		layers = append(layers, validate.PolicyLayer{Name: filepath.Join(opts.Ref, validate.ConfigFile), Config: cfg})
	}
	layers = append(layers, validate.CommandLineLayer(opts.Strict, opts.WarnAsError, opts.Ignore))
	return validate.ResolvePolicy(layers)
}

// ReadPolicy reads a release policy, a preset or a file, and those it
// starts from: opm catalog diff reads its pre-release channels.
func ReadPolicy(name string) (*validate.Policy, error) {
	layers, err := validate.LoadPolicy(name, readPolicyFile)
	if err != nil {
		return nil, err
	}
	return validate.ResolvePolicy(layers)
}

// readPolicyFile reads a policy file given on the command line (or named
// by one): a regular file, bounded.
func readPolicyFile(file string) ([]byte, error) {
	root, err := os.OpenRoot(filepath.Dir(filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	defer root.Close()
	data, err := safefs.ReadRegular(root, filepath.Base(file), validate.MaxConfigSize)
	if err != nil {
		return nil, safefs.Refusal(err, filepath.Base(file))
	}
	return data, nil
}

// gateOptions returns the release gate options of the policy: the target
// is --ocp-version, else the policy's ocpVersion, else, when the policy
// turns a gate rule on, what the catalog says (see detectTarget).
func gateOptions(ctx context.Context, opts Options, p *validate.Policy) (*validate.GateOptions, error) {
	var target *ocpversion.Version
	from := ""
	switch {
	case opts.OCPVersion != "":
		v, err := ocpversion.Parse(opts.OCPVersion)
		if err != nil {
			return nil, &validate.OptionError{Msg: "--ocp-version: " + err.Error()}
		}
		target, from = &v, "--ocp-version"
	case p.OCPVersion != "":
		v, err := p.Target()
		if err != nil {
			return nil, err
		}
		target, from = v, "the policy's ocpVersion"
	case p.WantsTarget():
		v, src, err := detectTarget(ctx, opts.Ref, opts.Registry)
		if err != nil {
			return nil, err
		}
		target, from = v, src
	}
	o, err := p.Gate(target, from)
	if err != nil {
		return nil, err
	}
	if o != nil && target == nil {
		o.TargetFrom = "nothing: no --ocp-version, no ocpVersion in the policy, no label"
	}
	return o, nil
}

// detectTarget reads the OpenShift version a catalog is built for: for a
// catalog image, its com.redhat.fbc.openshift.version label (Konflux's;
// the first version of its list) or its com.redhat.openshift.versions
// label; for a catalog directory DIR, the same labels in DIR.Dockerfile
// (what opm generate dockerfile writes), else the tag of its last FROM
// image (ose-operator-registry:v4.18). It returns nil when the catalog
// says nothing.
func detectTarget(ctx context.Context, ref string, reg render.RegistryOptions) (*ocpversion.Version, string, error) {
	if ref == "-" {
		return nil, "", nil
	}
	st, err := os.Stat(ref)
	switch {
	case err == nil && st.IsDir():
		dockerfile := filepath.Clean(ref) + ".Dockerfile"
		data, err := readPolicyFile(dockerfile)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, "", nil
		}
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", dockerfile, err)
		}
		v, src, err := targetFromDockerfile(data)
		if err != nil {
			return nil, "", fmt.Errorf("%s: %w", dockerfile, err)
		}
		if v == nil {
			return nil, "", nil
		}
		return v, dockerfile + " (" + src + ")", nil
	case err == nil || !looksLikeImage(ref):
		return nil, "", nil
	}
	img, err := image.Open(ctx, ref, reg.ImageOptions()...)
	if err != nil {
		return nil, "", err
	}
	defer img.Close()
	v, src, err := targetFromLabels(img.Labels())
	if err != nil || v == nil {
		return nil, "", err
	}
	return v, src + " of the image", nil
}

// targetFromLabels reads the target from image labels.
func targetFromLabels(labels map[string]string) (*ocpversion.Version, string, error) {
	if s, ok := labels[ocpversion.FBCLabel]; ok {
		v, err := ocpversion.FromFBCLabel(s)
		if err != nil {
			return nil, "", err
		}
		return &v, "label " + ocpversion.FBCLabel, nil
	}
	if s, ok := labels[ocpversion.VersionsLabel]; ok {
		v, err := ocpversion.FromVersionsLabel(s)
		if err != nil {
			return nil, "", err
		}
		return &v, "label " + ocpversion.VersionsLabel, nil
	}
	return nil, "", nil
}

// maxDockerfileLines bounds the instructions targetFromDockerfile reads.
const maxDockerfileLines = 100000

// targetFromDockerfile reads the target from a Dockerfile's LABEL
// instructions, else from the tag of its last FROM image when that is a
// version (v4.18). Instructions may continue on the next line with a
// backslash; ARG references are not expanded (such a value is skipped).
func targetFromDockerfile(data []byte) (*ocpversion.Version, string, error) {
	labels := map[string]string{}
	from := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var inst strings.Builder
	lines := 0
	flush := func() {
		s := strings.TrimSpace(inst.String())
		inst.Reset()
		word, rest, _ := strings.Cut(s, " ")
		switch strings.ToUpper(word) {
		case "LABEL":
			for k, v := range parseLabels(rest) {
				labels[k] = v
			}
		case "FROM":
			for _, f := range strings.Fields(rest) {
				if !strings.HasPrefix(f, "--") {
					from = f
					break
				}
			}
		}
	}
	for sc.Scan() {
		if lines++; lines > maxDockerfileLines {
			return nil, "", fmt.Errorf("more than %d lines", maxDockerfileLines)
		}
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			inst.WriteString(strings.TrimSuffix(l, "\\") + " ")
			continue
		}
		inst.WriteString(l)
		flush()
	}
	if err := sc.Err(); err != nil {
		return nil, "", err
	}
	flush()
	if v, src, err := targetFromLabels(labels); err != nil || v != nil {
		return v, "LABEL " + strings.TrimPrefix(src, "label "), err
	}
	if from == "" || strings.Contains(from, "$") {
		return nil, "", nil
	}
	r, err := reference.ParseNormalizedNamed(from)
	if err != nil {
		return nil, "", nil
	}
	tagged, ok := r.(reference.Tagged)
	if !ok {
		return nil, "", nil
	}
	v, err := ocpversion.Parse(tagged.Tag())
	if err != nil {
		return nil, "", nil // a tag that is not a version names no target
	}
	return &v, "the tag of FROM " + from, nil
}

// parseLabels reads the key=value pairs of a LABEL instruction (values
// may be double- or single-quoted), or its old one-pair form "key value".
func parseLabels(s string) map[string]string {
	out := map[string]string{}
	s = strings.TrimSpace(s)
	if !strings.Contains(strings.SplitN(s, " ", 2)[0], "=") {
		k, v, _ := strings.Cut(s, " ")
		out[unquote(k)] = unquote(strings.TrimSpace(v))
		return out
	}
	for len(s) > 0 {
		k, rest, ok := strings.Cut(s, "=")
		if !ok {
			break
		}
		var v string
		switch {
		case strings.HasPrefix(rest, `"`) || strings.HasPrefix(rest, `'`):
			q := rest[0]
			end := 1
			for end < len(rest) && rest[end] != q {
				if rest[end] == '\\' && q == '"' {
					end++
				}
				end++
			}
			v = rest[:min(end+1, len(rest))]
			rest = rest[min(end+1, len(rest)):]
		default:
			v, rest, _ = strings.Cut(rest, " ")
		}
		out[unquote(strings.TrimSpace(k))] = unquote(v)
		s = strings.TrimSpace(rest)
	}
	return out
}

func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		inner := s[1 : len(s)-1]
		if s[0] == '"' {
			inner = strings.ReplaceAll(inner, `\"`, `"`)
		}
		return inner
	}
	return s
}

// directoryChecks runs the rules about a catalog directory's layout, from
// the index of its files.
func directoryChecks(ctx context.Context, dir string, ix *declcfg.Index, o *validate.GateOptions) ([]validate.Finding, error) {
	if !o.On(validate.CodeDirectoryEmpty) && !o.On(validate.CodePackageDirMissing) {
		return nil, nil
	}
	prefix := path.Clean(filepath.ToSlash(dir))
	var files []string
	seen := map[int32]bool{}
	for i := 0; i < ix.Len(); i++ {
		f := ix.Blob(i).File
		if seen[f] {
			continue
		}
		seen[f] = true
		name := ix.FileName(int(f))
		if prefix != "." {
			name = strings.TrimPrefix(name, prefix+"/")
		}
		files = append(files, name)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return validate.DirectoryChecks(ctx, root.FS(), prefix, files, o)
}
