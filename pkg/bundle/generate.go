package bundle

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	yamlv3 "go.yaml.in/yaml/v3"
	"sigs.k8s.io/yaml"
)

// Bundle metadata generation, as upstream's `opm alpha bundle generate`
// does it (behaviour doc §1.13): the media type of a manifests directory,
// metadata/annotations.yaml and bundle.Dockerfile.

// The annotations generate writes besides the package and channels.
const (
	AnnotationMediaType = "operators.operatorframework.io.bundle.mediatype.v1"
	AnnotationManifests = "operators.operatorframework.io.bundle.manifests.v1"
	AnnotationMetadata  = "operators.operatorframework.io.bundle.metadata.v1"
)

// Media types of a manifests directory.
const (
	MediaTypeRegistryV1 = "registry+v1"
	MediaTypePlain      = "plain"
	MediaTypeHelm       = "helm"
)

// The values of the manifests and metadata annotations: the directories'
// places in the image.
const (
	ManifestsDir = "manifests/"
	MetadataDir  = "metadata/"
)

// AnnotationsFileName is the name generate gives the annotations file.
const AnnotationsFileName = "annotations.yaml"

// ErrNoManifestFiles is returned by DetectMediaType for a directory that
// holds no file (upstream: "The directory … contains no yaml files").
var ErrNoManifestFiles = errors.New("contains no yaml files")

// DetectMediaType returns the media type of the manifests directory at the
// root of fsys, as upstream decides it: helm when it holds a Chart.yaml
// naming a chart, registry+v1 when one of its files (the first document of
// each, directories skipped) is a ClusterServiceVersion, plain otherwise.
// Every file is read (so one that cannot be read is an error naming it);
// files that do not decode are not manifests.
func DetectMediaType(fsys fs.FS) (string, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return "", err
	}
	type file struct {
		name string
		data []byte
	}
	var files []file
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			return "", fmt.Errorf("unable to read file %s in bundle: %w", e.Name(), err)
		}
		files = append(files, file{e.Name(), data})
	}
	if len(files) == 0 {
		return "", ErrNoManifestFiles
	}
	for _, f := range files {
		if f.name == "Chart.yaml" && isChart(f.data) {
			return MediaTypeHelm, nil
		}
	}
	for _, f := range files {
		if obj, _, err := decodeObject(f.data); err == nil && obj["kind"] == kindCSV {
			return MediaTypeRegistryV1, nil
		}
	}
	return MediaTypePlain, nil
}

// isChart reports whether a Chart.yaml names a chart (helm's IsChartDir).
func isChart(data []byte) bool {
	var c struct {
		Name string `json:"name"`
	}
	return yaml.Unmarshal(data, &c) == nil && c.Name != ""
}

// Annotations are what generate writes to metadata/annotations.yaml.
type Annotations struct {
	MediaType string
	Package   string
	// Channels is the comma-separated list, as given.
	Channels string
	// DefaultChannel is written only when set.
	DefaultChannel string
}

// Map returns the annotations by key.
func (a Annotations) Map() map[string]string {
	m := map[string]string{
		AnnotationMediaType: a.MediaType,
		AnnotationManifests: ManifestsDir,
		AnnotationMetadata:  MetadataDir,
		AnnotationPackage:   a.Package,
		AnnotationChannels:  a.Channels,
	}
	if a.DefaultChannel != "" {
		m[AnnotationDefaultChannel] = a.DefaultChannel
	}
	return m
}

// Check refuses values that would make a broken annotations file or
// Dockerfile (whose LABEL lines carry them unquoted, as upstream writes
// them): an empty package or channel, white space or control characters,
// and a default channel that is not among the channels.
func (a Annotations) Check() error {
	if err := checkWord("package", a.Package); err != nil {
		return err
	}
	if a.Channels == "" {
		return errors.New("no channels")
	}
	chans := strings.Split(a.Channels, ",")
	for _, c := range chans {
		if err := checkWord("channel", c); err != nil {
			return fmt.Errorf("channels %q: %w", a.Channels, err)
		}
	}
	if a.DefaultChannel != "" {
		if err := checkWord("default channel", a.DefaultChannel); err != nil {
			return err
		}
		if !slices.Contains(chans, a.DefaultChannel) {
			return fmt.Errorf("default channel %q is not one of the channels (%s)", a.DefaultChannel, a.Channels)
		}
	}
	return nil
}

func checkWord(what, s string) error {
	if s == "" {
		return fmt.Errorf("empty %s name", what)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s name %q: not valid UTF-8", what, s)
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }); i >= 0 {
		return fmt.Errorf("%s name %q: white space or control characters are not allowed", what, s)
	}
	return nil
}

// YAML returns the annotations file: yaml.v3 with a 2-space indent and
// sorted keys, as upstream writes it.
func (a Annotations) YAML() []byte {
	var buf bytes.Buffer
	enc := yamlv3.NewEncoder(&buf)
	enc.SetIndent(2)
	v := struct {
		Annotations map[string]string `yaml:"annotations"`
	}{a.Map()}
	if err := enc.Encode(v); err != nil {
		panic(err) // a map of strings always encodes
	}
	_ = enc.Close()
	return buf.Bytes()
}

// Dockerfile returns upstream's bundle.Dockerfile: FROM base, a LABEL per
// annotation (the default channel's only when set), and the manifests and
// metadata directories (paths relative to the Dockerfile's directory)
// copied to /manifests/ and /metadata/. A path holding white space, a
// control character, a quote or a backslash is written in the JSON form of
// COPY, as JSON strings in which every such character is escaped: a
// directory name cannot add a line to the Dockerfile (see DockerfilePath).
func (a Annotations) Dockerfile(base, manifests, metadata string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "FROM %s\n\n", base)
	for _, k := range []string{AnnotationMediaType, AnnotationManifests, AnnotationMetadata, AnnotationPackage, AnnotationChannels, AnnotationDefaultChannel} {
		if v, ok := a.Map()[k]; ok {
			fmt.Fprintf(&b, "LABEL %s=%s\n", k, v)
		}
	}
	b.WriteString("\n")
	b.WriteString(copyLine(manifests, "/manifests/"))
	b.WriteString(copyLine(metadata, "/metadata/"))
	return []byte(b.String())
}

// DockerfilePath refuses a path that a Dockerfile cannot name exactly: one
// that is not valid UTF-8 (JSON strings hold text only).
func DockerfilePath(p string) error {
	if !utf8.ValidString(p) {
		return fmt.Errorf("%q is not valid UTF-8: bundle.Dockerfile cannot name it (rename the directory)", p)
	}
	return nil
}

// plainPath reports whether COPY's plain form carries p as it is.
func plainPath(p string) bool {
	for _, r := range p {
		if r == '"' || r == '\\' || unicode.IsSpace(r) || unicode.IsControl(r) || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

func copyLine(src, dst string) string {
	if plainPath(src) {
		return fmt.Sprintf("COPY %s %s\n", src, dst)
	}
	return fmt.Sprintf("COPY [%s, %s]\n", jsonQuote(src), jsonQuote(dst))
}

// jsonQuote writes s as a JSON string of printable characters: quotes and
// backslashes escaped, and every control, line-separating or otherwise
// unprintable character (U+0085, U+2028, ...) as a \u escape, so that no
// Dockerfile parser sees a line break in it.
func jsonQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == ' ' || (unicode.IsPrint(r) && !unicode.IsSpace(r)):
			b.WriteRune(r)
		case r > 0xffff:
			r1, r2 := utf16.EncodeRune(r)
			fmt.Fprintf(&b, "\\u%04x\\u%04x", r1, r2)
		default:
			fmt.Fprintf(&b, "\\u%04x", r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// CheckAnnotations compares an existing annotations file with the
// annotations generate would write, as upstream does before keeping it:
// every generated key must be there with the same value (other keys may
// be). The error lists every difference.
func CheckAnnotations(existing []byte, want Annotations) error {
	var f struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(existing, &f); err != nil {
		return fmt.Errorf("unable to parse the existing annotations: %w", err)
	}
	m := want.Map()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var problems []string
	for _, k := range keys {
		got, ok := f.Annotations[k]
		switch {
		case !ok:
			problems = append(problems, fmt.Sprintf("%s is missing there", k))
		case got != m[k]:
			problems = append(problems, fmt.Sprintf("%s is %q there, %q generated", k, got, m[k]))
		}
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// PackageDirInfo is what a package manifest directory (the legacy
// "packagemanifests" layout: a package.yaml beside one directory per
// bundle version) says about one of its bundles.
type PackageDirInfo struct {
	// File is the package manifest's name in the directory.
	File    string
	Package string
	// Channels are the channels whose upgrade graph holds the bundle,
	// sorted.
	Channels []string
	// DefaultChannel is the manifest's default channel, or its only
	// channel.
	DefaultChannel string
}

// CSVName returns the name of the first ClusterServiceVersion among the
// files at the root of fsys (first documents only, in name order), or "".
func CSVName(fsys fs.FS) (string, error) {
	csv, err := findCSV(fsys, ".")
	if err != nil || csv == nil {
		return "", err
	}
	return csv.name, nil
}

type csvEdges struct {
	name  string
	edges []string // replaces and skips
}

// findCSV reads the files of dir (not its subdirectories) in name order
// and returns the first ClusterServiceVersion, or nil.
func findCSV(fsys fs.FS, dir string) (*csvEdges, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		data, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		obj, _, err := decodeObject(data)
		if err != nil || obj["kind"] != kindCSV {
			continue
		}
		c := &csvEdges{}
		meta, _ := obj["metadata"].(map[string]any)
		c.name, _ = meta["name"].(string)
		spec, _ := obj["spec"].(map[string]any)
		if r, _ := spec["replaces"].(string); r != "" {
			c.edges = append(c.edges, r)
		}
		skips, _ := spec["skips"].([]any)
		for _, s := range skips {
			if s, ok := s.(string); ok && s != "" {
				c.edges = append(c.edges, s)
			}
		}
		return c, nil
	}
	return nil, nil
}

// InferFromPackageDir reads the package manifest directory at the root of
// fsys (the parent of a bundle's manifests directory) as upstream does to
// fill a missing package or channels: the first file that is a package
// manifest (packageName, channels with their currentCSV, defaultChannel),
// and the CSV of each subdirectory. A channel holds the bundle when its
// head, followed through every replaces and skips, reaches csvName.
// Subdirectories without a CSV are passed over.
func InferFromPackageDir(fsys fs.FS, csvName string) (*PackageDirInfo, error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var (
		info     *PackageDirInfo
		channels []struct{ name, head string }
	)
	edges := map[string][]string{}
	for _, e := range entries {
		if e.IsDir() {
			c, err := findCSV(fsys, e.Name())
			if err != nil {
				return nil, err
			}
			if c != nil {
				edges[c.name] = c.edges
			}
			continue
		}
		if info != nil {
			continue
		}
		data, err := fs.ReadFile(fsys, e.Name())
		if err != nil {
			continue
		}
		var m struct {
			PackageName string `json:"packageName"`
			Channels    []struct {
				Name       string `json:"name"`
				CurrentCSV string `json:"currentCSV"`
			} `json:"channels"`
			DefaultChannel string `json:"defaultChannel"`
		}
		if decodeTyped(data, &m) != nil || m.PackageName == "" {
			continue
		}
		info = &PackageDirInfo{File: e.Name(), Package: m.PackageName, DefaultChannel: m.DefaultChannel}
		for _, c := range m.Channels {
			channels = append(channels, struct{ name, head string }{c.Name, c.CurrentCSV})
		}
		if info.DefaultChannel == "" && len(m.Channels) == 1 {
			info.DefaultChannel = m.Channels[0].Name
		}
	}
	if info == nil {
		return nil, errors.New("no package manifest (a file with packageName and channels) found")
	}
	for _, c := range channels {
		seen := map[string]bool{}
		todo := []string{c.head}
		for len(todo) > 0 {
			n := todo[len(todo)-1]
			todo = todo[:len(todo)-1]
			if seen[n] {
				continue
			}
			seen[n] = true
			todo = append(todo, edges[n]...)
		}
		if seen[csvName] {
			info.Channels = append(info.Channels, c.name)
		}
	}
	sort.Strings(info.Channels)
	return info, nil
}
