package image_test

// Local images (OCI layouts, OCI archives, docker archives) that are
// hostile or broken, and the cases where go-containerregistry's own
// readers (pkg/v1/layout, pkg/v1/tarball) would not do (see the package
// documentation): each TestGGCR* test pins the library's behaviour, so an
// upgrade that fixes it fails here and tells us to reconsider.

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/image"
)

// writeLayout writes img (and other, when not nil) as an OCI layout under
// dir/name and returns its path.
func writeLayout(t *testing.T, dir string, imgs ...v1.Image) string {
	t.Helper()
	p := filepath.Join(dir, "layout")
	lp, err := layout.Write(p, empty.Index)
	if err != nil {
		t.Fatal(err)
	}
	for i, img := range imgs {
		if err := lp.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": fmt.Sprint("v", i+1)})); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func blobFile(dir string, h v1.Hash) string { return filepath.Join(dir, "blobs", h.Algorithm, h.Hex) }

// bounded runs f and fails when it takes longer than d (it must not hang
// on a FIFO or device).
func bounded(t *testing.T, d time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(d):
		t.Fatalf("still running after %v", d)
		return nil
	}
}

// TestLayoutHostile: special files, links out of the layout, tampered and
// oversized blobs in OCI layouts (issue 10, items 5 and 6).
func TestLayoutHostile(t *testing.T) {
	img := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: strings.Repeat("a", 1000)}))
	other := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "OTHER"}))
	md, _ := img.Digest()
	otherMD, _ := other.Digest()
	layers, _ := img.Layers()
	ld, _ := layers[0].Digest()
	cfg, _ := img.ConfigName()

	for _, tc := range []struct {
		name   string
		spoil  func(t *testing.T, dir, secretFile string)
		suffix string // appended to the reference
		opts   []image.Option
		want   []string
		is     error
	}{
		{name: "FIFOIndex", spoil: func(t *testing.T, dir, _ string) {
			os.Remove(filepath.Join(dir, "index.json"))
			syscall.Mkfifo(filepath.Join(dir, "index.json"), 0o600)
		}, want: []string{"not an OCI image layout", "index.json", "not a regular file (a named pipe)"}},
		{name: "FIFOManifest", spoil: func(t *testing.T, dir, _ string) {
			os.Remove(blobFile(dir, md))
			syscall.Mkfifo(blobFile(dir, md), 0o600)
		}, want: []string{"manifest " + md.String(), "not a regular file (a named pipe)"}},
		{name: "FIFOLayer", spoil: func(t *testing.T, dir, _ string) {
			os.Remove(blobFile(dir, ld))
			syscall.Mkfifo(blobFile(dir, ld), 0o600)
		}, want: []string{"layer " + ld.String(), "not a regular file (a named pipe)"}},
		{name: "DeviceLayer", spoil: func(t *testing.T, dir, _ string) {
			// A character device like /dev/zero (1, 5); needs root.
			os.Remove(blobFile(dir, ld))
			if err := syscall.Mknod(blobFile(dir, ld), syscall.S_IFCHR|0o600, 1<<8|5); err != nil {
				t.Skipf("mknod: %v", err)
			}
		}, want: []string{"layer " + ld.String(), "not a regular file (a character device)"}},
		{name: "IndexLinkToDevZero", spoil: func(t *testing.T, dir, _ string) {
			os.Remove(filepath.Join(dir, "index.json"))
			os.Symlink("/dev/zero", filepath.Join(dir, "index.json"))
		}, want: []string{"not an OCI image layout", "a symbolic link leads outside the directory being read"}},
		{name: "IndexLinkOutside", spoil: func(t *testing.T, dir, secretFile string) {
			os.Remove(filepath.Join(dir, "index.json"))
			os.Symlink(secretFile, filepath.Join(dir, "index.json"))
		}, want: []string{"not an OCI image layout", "a symbolic link leads outside the directory being read"}},
		{name: "BlobLinkOutside", spoil: func(t *testing.T, dir, secretFile string) {
			os.Remove(blobFile(dir, cfg))
			os.Symlink("../../../secret", blobFile(dir, cfg))
		}, want: []string{"config " + cfg.String(), "a symbolic link leads outside the directory being read"}},
		{name: "TamperedLayerSameSize", spoil: func(t *testing.T, dir, _ string) {
			b, _ := os.ReadFile(blobFile(dir, ld))
			b[len(b)-1] ^= 0xff
			os.WriteFile(blobFile(dir, ld), b, 0o600)
		}, want: []string{"extracting", "layer " + ld.String(), "hash to"}, is: image.ErrDigest},
		{name: "TamperedLayerSize", spoil: func(t *testing.T, dir, _ string) {
			f, _ := os.OpenFile(blobFile(dir, ld), os.O_APPEND|os.O_WRONLY, 0)
			f.Write(make([]byte, 1<<20))
			f.Close()
		}, want: []string{"layer " + ld.String(), "the descriptor declares"}, is: image.ErrDigest},
		{name: "PinnedDigestOtherContent", suffix: "@" + md.String(), spoil: func(t *testing.T, dir, _ string) {
			// The pinned manifest's blob holds another image's manifest.
			b, _ := os.ReadFile(blobFile(dir, otherMD))
			os.WriteFile(blobFile(dir, md), b, 0o600)
		}, want: []string{"manifest " + md.String()}, is: image.ErrDigest},
		{name: "PinnedDigestHugeFile", suffix: "@sha256:" + strings.Repeat("a", 64), spoil: func(t *testing.T, dir, _ string) {
			os.WriteFile(filepath.Join(dir, "blobs", "sha256", strings.Repeat("a", 64)), make([]byte, 5<<20), 0o600)
		}, want: []string{"over the 4 MiB manifest limit"}, is: image.ErrTooLarge},
		{name: "ManifestDeclaredOverLimit", spoil: func(t *testing.T, dir, _ string) {
			p := filepath.Join(dir, "index.json")
			b, _ := os.ReadFile(p)
			var idx v1.IndexManifest
			json.Unmarshal(b, &idx)
			idx.Manifests[0].Size = 5 << 20
			os.WriteFile(p, jsonBytes(t, idx), 0o600)
		}, want: []string{"manifest " + md.String(), "5242880 bytes declared, over the 4 MiB manifest limit"}, is: image.ErrTooLarge},
		{name: "IndexOverLimit", opts: []image.Option{image.WithLimits(image.Limits{Manifest: 10})},
			want: []string{"index.json", "over the 10 B manifest limit"}, is: image.ErrTooLarge},
		{name: "ConfigOverLimit", opts: []image.Option{image.WithLimits(image.Limits{Config: 10})},
			want: []string{"config " + cfg.String(), "over the 10 B config limit"}, is: image.ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, secretFile := sandbox(t)
			dir := writeLayout(t, base, img, other)
			suffix := tc.suffix
			if suffix == "" {
				suffix = ":v1"
			}
			if tc.spoil != nil {
				tc.spoil(t, dir, secretFile)
			}
			ref := "oci:" + dir + suffix
			var got []string
			err := bounded(t, 10*time.Second, func() (err error) {
				got, err = openExtract(t, ref, []string{"configs"}, append(opts(t), tc.opts...)...)
				return err
			})
			wantErr(t, err, append([]string{ref}, tc.want...)...)
			if tc.is != nil && !errors.Is(err, tc.is) {
				t.Errorf("err does not wrap %v", tc.is)
			}
			noSecret(t, "error", err.Error())
			if got != nil {
				t.Errorf("extracted %v", got)
			}
		})
	}
}

// TestArchiveHostile: OCI archives that are special files, hold links out
// of the archive, tampered blobs, too many entries, or take a cancelled
// context.
func TestArchiveHostile(t *testing.T) {
	img := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "a"}))
	layers, _ := img.Layers()
	ld, _ := layers[0].Digest()
	base, secretFile := sandbox(t)
	dir := writeLayout(t, base, img)
	archive := filepath.Join(base, "layout.tar")
	tarDir(t, dir, archive)

	fifo := filepath.Join(base, "fifo.tar")
	syscall.Mkfifo(fifo, 0o600)

	// An archive whose index.json is a link to a host file.
	linked := filepath.Join(base, "linked.tar")
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "index.json", Typeflag: tar.TypeSymlink, Linkname: "../../../../../../.." + secretFile})
	tw.WriteHeader(&tar.Header{Name: "oci-layout", Typeflag: tar.TypeSymlink, Linkname: "/etc/passwd"})
	tw.Close()
	os.WriteFile(linked, buf.Bytes(), 0o600)

	// The same archive with the layer's bytes changed in place.
	tampered := filepath.Join(base, "tampered.tar")
	b, _ := os.ReadFile(archive)
	lb, _ := os.ReadFile(blobFile(dir, ld))
	i := bytes.Index(b, lb)
	if i < 0 {
		t.Fatal("layer not found in the archive")
	}
	b = bytes.Clone(b)
	b[i+len(lb)/2] ^= 0xff
	os.WriteFile(tampered, b, 0o600)

	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name, ref string
		ctx       context.Context
		opts      []image.Option
		want      []string
	}{
		{name: "FIFO", ref: "oci-archive:" + fifo, want: []string{fifo + ": not a regular file"}},
		{name: "DockerFIFO", ref: "docker-archive:" + fifo, want: []string{fifo + ": not a regular file"}},
		{name: "DevZero", ref: "oci-archive:/dev/zero", want: []string{"/dev/zero: not a regular file"}},
		{name: "LinkOutside", ref: "oci-archive:" + linked, want: []string{"not an OCI image layout", "index.json", "does not exist"}},
		{name: "Tampered", ref: "oci-archive:" + tampered, want: []string{"layer " + ld.String(), "hash to"}},
		{name: "TooManyEntries", ref: "oci-archive:" + archive, opts: []image.Option{image.WithLimits(image.Limits{Entries: 2})}, want: []string{"archive: more than 2 entries (the entries limit)"}},
		{name: "Cancelled", ref: "oci-archive:" + archive, ctx: cancelled, want: []string{"context canceled"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			err := bounded(t, 10*time.Second, func() error {
				img, err := image.Open(ctx, tc.ref, append(opts(t), tc.opts...)...)
				if err != nil {
					return err
				}
				defer img.Close()
				return img.Extract(ctx, t.TempDir(), "configs")
			})
			wantErr(t, err, tc.want...)
			noSecret(t, "error", err.Error())
		})
	}
}

// dockerArchive writes a `docker save` archive by hand: manifest.json,
// the config under cfgName, and uncompressed layers under layerNames.
func dockerArchive(t *testing.T, file string, cfgName string, cfg []byte, layerNames []string, layerData [][]byte) {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	add := func(name string, b []byte) {
		tw.WriteHeader(&tar.Header{Name: name, Typeflag: tar.TypeReg, Size: int64(len(b)), Mode: 0o644})
		tw.Write(b)
	}
	add("manifest.json", jsonBytes(t, []map[string]any{{"Config": cfgName, "RepoTags": []string{"example.com/legacy:v1"}, "Layers": layerNames}}))
	add(cfgName, cfg)
	for i, n := range layerNames {
		add(n, layerData[i])
	}
	tw.Close()
	if err := os.WriteFile(file, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// TestDockerArchiveDiffIDs: docker archive layers, whatever their names
// (legacy ID/layer.tar, HEX.tar, blobs/sha256/HEX), are checked against
// the config's diff_ids (issue 10, item 8).
func TestDockerArchiveDiffIDs(t *testing.T) {
	l, _ := registrytest.CompressedLayer("none", registrytest.Entry{Name: "configs/a.json", Body: "good"})
	rc, _ := l.Uncompressed()
	good, _ := io.ReadAll(rc)
	lbad, _ := registrytest.CompressedLayer("none", registrytest.Entry{Name: "configs/a.json", Body: "EVIL"})
	rc, _ = lbad.Uncompressed()
	bad, _ := io.ReadAll(rc)
	config := func(diffIDs ...string) []byte {
		return jsonBytes(t, map[string]any{
			"architecture": "amd64", "os": "linux",
			"config": map[string]any{"Labels": catalogLabels},
			"rootfs": map[string]any{"type": "layers", "diff_ids": diffIDs},
		})
	}
	okCfg := config("sha256:" + sha(good))
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		cfgName string
		cfg     []byte
		layers  []string
		data    [][]byte
		want    string
	}{
		{name: "Success/Legacy", cfgName: sha(okCfg) + ".json", cfg: okCfg, layers: []string{"0123abcd/layer.tar"}, data: [][]byte{good}},
		{name: "Success/Blobs", cfgName: "blobs/sha256/" + sha(okCfg), cfg: okCfg, layers: []string{"blobs/sha256/" + sha(good)}, data: [][]byte{good}},
		{name: "Error/LegacyTampered", cfgName: sha(okCfg) + ".json", cfg: okCfg, layers: []string{"0123abcd/layer.tar"}, data: [][]byte{bad},
			want: "layer 0123abcd/layer.tar: the uncompressed layer hashes to sha256:" + sha(bad) + ", not sha256:" + sha(good) + " (its diff_id in the image config)"},
		{name: "Error/HexNameTampered", cfgName: sha(okCfg) + ".json", cfg: okCfg, layers: []string{sha(good) + ".tar"}, data: [][]byte{bad},
			want: "(its diff_id in the image config)"},
		{name: "Error/BlobsTampered", cfgName: "blobs/sha256/" + sha(okCfg), cfg: okCfg, layers: []string{"blobs/sha256/" + sha(good)}, data: [][]byte{bad},
			want: "layer blobs/sha256/" + sha(good) + ": the " + fmt.Sprint(len(bad)) + " bytes declared hash to"},
		{name: "Error/DiffIDCount", cfgName: "c.json", cfg: config(), layers: []string{"l/layer.tar"}, data: [][]byte{good},
			want: "config c.json: 0 diff_ids for 1 layers in manifest.json"},
		{name: "Error/ConfigDigest", cfgName: strings.Repeat("0", 64) + ".json", cfg: okCfg, layers: []string{"l/layer.tar"}, data: [][]byte{good},
			want: "config " + strings.Repeat("0", 64) + ".json: hashes to sha256:" + sha(okCfg)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tc.name, "/", "-")+".tar")
			dockerArchive(t, file, tc.cfgName, tc.cfg, tc.layers, tc.data)
			ref := "docker-archive:" + file
			got, err := openExtract(t, ref, []string{"configs"}, opts(t)...)
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				equal(t, got, []string{"configs drwx------", "configs/a.json -rw------- good"})
				return
			}
			wantErr(t, err, ref, tc.want)
			if got != nil {
				t.Errorf("extracted %v", got)
			}
		})
	}
}

// TestGGCRLayoutBlobUnverified pins why we read layouts ourselves: the
// library hands out a tampered layout blob without an error.
func TestGGCRLayoutBlobUnverified(t *testing.T) {
	img := mustImage(t, catalogLabels, mustLayer(t, registrytest.Entry{Name: "configs/a.json", Body: "a"}))
	dir := writeLayout(t, t.TempDir(), img)
	layers, _ := img.Layers()
	ld, _ := layers[0].Digest()
	b, _ := os.ReadFile(blobFile(dir, ld))
	b[len(b)-1] ^= 0xff
	os.WriteFile(blobFile(dir, ld), b, 0o600)
	rc, err := layout.Path(dir).Blob(ld)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	if _, err := io.ReadAll(rc); err != nil {
		t.Skipf("go-containerregistry now verifies layout blobs (%v): reconsider using pkg/v1/layout", err)
	}
	// Ours refuses it.
	if _, err := openExtract(t, "oci:"+dir, []string{"configs"}, opts(t)...); !errors.Is(err, image.ErrDigest) {
		t.Errorf("err = %v, want ErrDigest", err)
	}
}

// TestGGCRLayoutIndexFollowsLinks pins that the library reads index.json
// through a symbolic link to any host file.
func TestGGCRLayoutIndexFollowsLinks(t *testing.T) {
	img := mustImage(t, catalogLabels)
	base := t.TempDir()
	dir := writeLayout(t, base, img)
	outside := filepath.Join(base, "outside.json")
	os.Rename(filepath.Join(dir, "index.json"), outside)
	os.Symlink(outside, filepath.Join(dir, "index.json"))
	if _, err := layout.ImageIndexFromPath(dir); err != nil {
		t.Skipf("go-containerregistry now refuses the link (%v): reconsider using pkg/v1/layout", err)
	}
	if _, err := openExtract(t, "oci:"+dir, []string{"configs"}, opts(t)...); err == nil || !strings.Contains(err.Error(), "a symbolic link leads outside the directory being read") {
		t.Errorf("err = %v, want the link refused", err)
	}
}

// TestGGCRLayoutIndexFIFO pins that the library blocks on an index.json
// that is a FIFO (until a writer comes), where we refuse it at once.
func TestGGCRLayoutIndexFIFO(t *testing.T) {
	dir := writeLayout(t, t.TempDir(), mustImage(t, catalogLabels))
	idx := filepath.Join(dir, "index.json")
	os.Remove(idx)
	if err := syscall.Mkfifo(idx, 0o600); err != nil {
		t.Skip(err)
	}
	done := make(chan error, 1)
	go func() {
		lp := layout.Path(dir)
		_, err := lp.ImageIndex()
		done <- err
	}()
	select {
	case err := <-done:
		t.Skipf("go-containerregistry no longer blocks on a FIFO (%v): reconsider using pkg/v1/layout", err)
	case <-time.After(200 * time.Millisecond):
	}
	// Unblock it: a writer that closes at once.
	if f, err := os.OpenFile(idx, os.O_WRONLY, 0); err == nil {
		f.Close()
	}
	<-done
	err := bounded(t, 5*time.Second, func() error {
		_, err := openExtract(t, "oci:"+dir, []string{"configs"}, opts(t)...)
		return err
	})
	wantErr(t, err, "not a regular file (a named pipe)")
}

// TestGGCRTarballLayerUnverified pins that the library trusts a docker
// archive's diff_ids: a tampered uncompressed layer reads without error.
func TestGGCRTarballLayerUnverified(t *testing.T) {
	l, _ := registrytest.CompressedLayer("none", registrytest.Entry{Name: "configs/a.json", Body: "good"})
	rc, _ := l.Uncompressed()
	good, _ := io.ReadAll(rc)
	bad := bytes.Replace(good, []byte("good"), []byte("EVIL"), 1)
	cfg := jsonBytes(t, map[string]any{"architecture": "amd64", "os": "linux",
		"rootfs": map[string]any{"type": "layers", "diff_ids": []string{"sha256:" + sha(good)}}})
	file := filepath.Join(t.TempDir(), "legacy.tar")
	dockerArchive(t, file, sha(cfg)+".json", cfg, []string{"id/layer.tar"}, [][]byte{bad})
	img, err := tarball.ImageFromPath(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	layers, err := img.Layers()
	if err != nil {
		t.Fatal(err)
	}
	urc, err := layers[0].Uncompressed()
	if err != nil {
		t.Fatal(err)
	}
	defer urc.Close()
	got, err := io.ReadAll(urc)
	if err != nil || !bytes.Equal(got, bad) {
		t.Skipf("go-containerregistry now checks diff_ids (%v): reconsider using pkg/v1/tarball", err)
	}
	_, err = openExtract(t, "docker-archive:"+file, []string{"configs"}, opts(t)...)
	wantErr(t, err, "its diff_id in the image config")
}
