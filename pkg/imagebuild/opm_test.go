package imagebuild

import (
	"archive/tar"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/types"

	"github.com/opmkit/opm/pkg/image"
)

// fakeELF writes a minimal ELF64 executable header for machine (big-endian
// for s390x), with a PT_INTERP program header when dynamic.
func fakeELF(t *testing.T, arch string, dynamic bool) string {
	t.Helper()
	m := elfMachines[arch]
	var order binary.ByteOrder = binary.LittleEndian
	data := byte(1)
	if m.order == "BigEndian" {
		order, data = binary.BigEndian, 2
	}
	var b bytes.Buffer
	ident := [16]byte{0x7f, 'E', 'L', 'F', 2, data, 1}
	b.Write(ident[:])
	phnum := uint16(0)
	if dynamic {
		phnum = 1
	}
	for _, v := range []any{
		uint16(2), uint16(m.machine), uint32(1), // ET_EXEC, machine, version
		uint64(0x401000), uint64(64), uint64(0), // entry, phoff, shoff
		uint32(0), uint16(64), uint16(56), phnum, // flags, ehsize, phentsize, phnum
		uint16(64), uint16(0), uint16(0), // shentsize, shnum, shstrndx
	} {
		if err := binary.Write(&b, order, v); err != nil {
			t.Fatal(err)
		}
	}
	if dynamic {
		for _, v := range []any{uint32(3), uint32(4), uint64(120), uint64(0), uint64(0), uint64(28), uint64(28), uint64(1)} {
			if err := binary.Write(&b, order, v); err != nil {
				t.Fatal(err)
			}
		}
		b.WriteString("/lib64/ld-linux-x86-64.so.2\x00")
	}
	p := filepath.Join(t.TempDir(), "opm-"+arch)
	if err := os.WriteFile(p, b.Bytes(), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestCheckStatic(t *testing.T) {
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	for _, tc := range []struct {
		path string
		p    v1.Platform
		want string
	}{
		{fakeELF(t, "amd64", false), amd64, ""},
		{fakeELF(t, "s390x", false), v1.Platform{OS: "linux", Architecture: "s390x"}, ""},
		{fakeELF(t, "arm64", false), amd64, "an executable for EM_AARCH64"},
		{fakeELF(t, "amd64", true), amd64, "dynamically linked"},
		{fakeELF(t, "amd64", false), v1.Platform{OS: "windows", Architecture: "amd64"}, "Linux only"},
		{"opm_test.go", amd64, "not an ELF executable"},
	} {
		err := CheckStatic(tc.path, tc.p)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s for %s: %v, want %q", filepath.Base(tc.path), tc.p, err, tc.want)
		}
	}
}

// layerFiles lists a layer's tar entries as "name mode uid:gid time size".
func layerFiles(t *testing.T, l v1.Layer) map[string]*tar.Header {
	t.Helper()
	rc, err := l.Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	out := map[string]*tar.Header{}
	tr := tar.NewReader(rc)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			data, _ := io.ReadAll(tr)
			h.PAXRecords = map[string]string{"content": string(data)}
		}
		out[h.Name] = h
	}
}

func TestOpmImage(t *testing.T) {
	ctx := context.Background()
	epoch := time.Unix(1700000000, 0).UTC()
	plats := []v1.Platform{{OS: "linux", Architecture: "amd64"}, {OS: "linux", Architecture: "s390x"}}
	build := func() *Built {
		var bins []Binary
		for _, p := range plats {
			bins = append(bins, Binary{Platform: p, Path: fakeELF(t, p.Architecture, false)})
		}
		b, err := OpmImage(ctx, OpmImageOptions{Binaries: bins, Labels: map[string]string{"org.opencontainers.image.version": "v1"}, Created: epoch, ModTime: epoch})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { b.Close() })
		return b
	}
	b := build()
	if b.MediaType != types.OCIImageIndex || len(b.Images) != 2 {
		t.Fatalf("%s with %d images", b.MediaType, len(b.Images))
	}
	if again := build(); again.Digest != b.Digest {
		t.Errorf("two builds: %s and %s", b.Digest, again.Digest)
	}
	for i, img := range b.Images {
		if img.Platform().String() != plats[i].String() {
			t.Errorf("image %d for %s", i, img.Platform())
		}
		cf, _ := img.ConfigFile()
		if cf.Config.User != "1001" || !reflect.DeepEqual(cf.Config.Entrypoint, []string{"/bin/opm"}) || cf.Config.Cmd != nil ||
			cf.Config.Labels["org.opencontainers.image.version"] != "v1" || cf.Architecture != plats[i].Architecture || !cf.Created.Equal(epoch) {
			t.Errorf("image %d config %+v", i, cf.Config)
		}
		ls, _ := img.Layers()
		if len(ls) != 1 {
			t.Fatalf("%d layers", len(ls))
		}
		files := layerFiles(t, ls[0])
		for name, want := range map[string]int64{"bin/": 0o755, "bin/opm": 0o755, "etc/": 0o755, "etc/passwd": 0o644, "etc/group": 0o644, "tmp/": 0o1777} {
			h := files[name]
			if h == nil || h.Mode != want || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(epoch) {
				t.Errorf("image %d: %s: %+v, want mode %o", i, name, h, want)
			}
		}
		if len(files) != 6 {
			t.Errorf("image %d: %d entries", i, len(files))
		}
		if got := files["etc/passwd"].PAXRecords["content"]; !strings.Contains(got, "opm:x:1001:0:") {
			t.Errorf("passwd %q", got)
		}
	}

	// A catalog on it keeps its user and entrypoint, one image per
	// platform, sharing the catalog layer.
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(`{"schema":"olm.package","name":"p"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Catalog(ctx, CatalogOptions{Dir: dir, Base: b.AsBase("test"), Cmd: []string{"serve", "/configs"}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Images) != 2 || c.MediaType != types.OCIImageIndex {
		t.Fatalf("catalog: %d images, %s", len(c.Images), c.MediaType)
	}
	cf, _ := c.Images[1].ConfigFile()
	if cf.Config.User != "1001" || cf.Config.Entrypoint[0] != "/bin/opm" || cf.Architecture != "s390x" {
		t.Errorf("catalog config %+v", cf.Config)
	}
}

func TestOpmImageRefuses(t *testing.T) {
	ctx := context.Background()
	amd64 := v1.Platform{OS: "linux", Architecture: "amd64"}
	for _, tc := range []struct {
		bins []Binary
		want string
	}{
		{nil, "no executable"},
		{[]Binary{{amd64, fakeELF(t, "amd64", true)}}, "dynamically linked"},
		{[]Binary{{amd64, fakeELF(t, "amd64", false)}, {amd64, fakeELF(t, "amd64", false)}}, "two executables for linux/amd64"},
	} {
		if _, err := OpmImage(ctx, OpmImageOptions{Binaries: tc.bins}); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want %q", tc.bins, err, tc.want)
		}
	}
	// An executable over the extract limit.
	_, err := OpmImage(ctx, OpmImageOptions{Binaries: []Binary{{amd64, fakeELF(t, "amd64", false)}}, Limits: image.Limits{Extract: 10}})
	if !errors.Is(err, ErrLimit) {
		t.Errorf("over the limit: %v", err)
	}
}
