package registrytest

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/rogpeppe/go-internal/testscript"
)

// ScriptCmds returns testscript commands for image tests:
//
//	registry start|stop            start (setting $REGISTRY) or stop a registry
//	registry fault NAME            401, corrupt (layer bytes), truncate, endless (layers
//	                               that never end), bigmanifest (5 MiB), endlessmanifest,
//	                               redirectloop (blob GETs redirect to themselves forever),
//	                               hang (blob requests wait until the client goes), none
//	registry waithang              wait until a request hangs in the hang fault
//	pushimage REF DIR PREFIX [k=v...] [-- ENTRY...]
//	                               push DIR under PREFIX (and the entries) as a one-layer image
//	pushtar REF [k=v...] -- ENTRY...    push a one-layer image of crafted entries:
//	                                    file:NAME=BODY, dir:NAME, symlink:NAME=TARGET, link:NAME=TARGET
//	writeimage oci|oci-archive|docker-archive PATH DIR PREFIX [k=v...] [-- ENTRY...]
//	                               write the image to an OCI layout or archive, or a docker archive
//	emptydir DIR                   fail unless DIR is empty
//	mkfifo PATH                    make a named pipe
//	spoilblobs DIR swap|fifo       spoil every blob of DIR/blobs/sha256 (a cache or a layout):
//	                               same size, other bytes; or a FIFO in its place
//	dirsize DIR MAX                fail when DIR's files hold more than MAX bytes or a
//	                               temporary (.tmp-*) file is left
//	status CODE PROG [ARGS...]     run PROG (as exec does) and expect exit code CODE
//	                               (stdout and stderr are then checked as after exec)
func ScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(*testscript.TestScript, bool, []string){
		"registry":   cmdRegistry,
		"pushimage":  cmdPushImage,
		"pushtar":    cmdPushTar,
		"writeimage": cmdWriteImage,
		"emptydir":   cmdEmptyDir,
		"mkfifo":     cmdMkfifo,
		"spoilblobs": cmdSpoilBlobs,
		"dirsize":    cmdDirSize,
		"status":     cmdStatus,
	}
}

type scriptRegistry struct {
	srv     *httptest.Server
	fault   atomic.Value // string
	hanging atomic.Int64 // requests waiting in the hang fault
}

var registries sync.Map // *testscript.TestScript -> *scriptRegistry

func cmdRegistry(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) == 0 {
		ts.Fatalf("usage: registry start|stop|fault NAME")
	}
	switch args[0] {
	case "start":
		r := &scriptRegistry{}
		r.fault.Store("none")
		reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
		endless := EndlessBlob("", reg, nil)
		bigManifest, endlessManifest := HugeManifest(5<<20, nil), HugeManifest(-1, nil)
		redirectLoop := RedirectLoop(IsBlobGet, nil)
		r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			blob := req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/sha256:")
			switch r.fault.Load().(string) {
			case "endless":
				if endless(w, req) {
					return
				}
			case "bigmanifest":
				if bigManifest(w, req) {
					return
				}
			case "endlessmanifest":
				if endlessManifest(w, req) {
					return
				}
			case "redirectloop":
				if redirectLoop(w, req) {
					return
				}
			case "hang":
				if blob {
					r.hanging.Add(1)
					defer r.hanging.Add(-1)
					<-req.Context().Done()
					return
				}
			case "401":
				w.Header().Set("WWW-Authenticate", `Basic realm="test"`)
				w.WriteHeader(http.StatusUnauthorized)
				return
			case "corrupt":
				if blob {
					rec := httptest.NewRecorder()
					reg.ServeHTTP(rec, req)
					b := rec.Body.Bytes()
					if len(b) > 0 && !strings.Contains(string(b), "rootfs") {
						b[len(b)/2] ^= 0xff
					}
					w.WriteHeader(rec.Code)
					w.Write(b)
					return
				}
			case "truncate":
				if blob {
					rec := httptest.NewRecorder()
					reg.ServeHTTP(rec, req)
					b := rec.Body.Bytes()
					if !strings.Contains(string(b), "rootfs") {
						w.Header().Set("Content-Length", fmt.Sprint(len(b)))
						w.WriteHeader(rec.Code)
						w.Write(b[:len(b)/2])
						return
					}
					w.Write(b)
					return
				}
			}
			reg.ServeHTTP(w, req)
		}))
		registries.Store(ts, r)
		ts.Defer(r.srv.Close)
		ts.Setenv("REGISTRY", strings.TrimPrefix(r.srv.URL, "http://"))
	case "stop":
		scriptReg(ts).srv.Close()
	case "waithang":
		r := scriptReg(ts)
		for start := time.Now(); r.hanging.Load() == 0; time.Sleep(10 * time.Millisecond) {
			if time.Since(start) > 30*time.Second {
				ts.Fatalf("no request hanging after 30s")
			}
		}
	case "fault":
		if len(args) != 2 {
			ts.Fatalf("usage: registry fault 401|corrupt|truncate|endless|bigmanifest|endlessmanifest|redirectloop|hang|none")
		}
		scriptReg(ts).fault.Store(args[1])
	default:
		ts.Fatalf("unknown registry subcommand %q", args[0])
	}
}

func scriptReg(ts *testscript.TestScript) *scriptRegistry {
	r, ok := registries.Load(ts)
	if !ok {
		ts.Fatalf("no registry started")
	}
	return r.(*scriptRegistry)
}

func parseLabels(ts *testscript.TestScript, args []string) map[string]string {
	labels := map[string]string{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			ts.Fatalf("label %q: want KEY=VALUE", a)
		}
		labels[k] = v
	}
	return labels
}

// splitEntries splits "ARGS... [-- ENTRY...]" and parses the entries:
// file:NAME=BODY, dir:NAME, symlink:NAME=TARGET, link:NAME=TARGET.
func splitEntries(ts *testscript.TestScript, args []string) ([]string, []Entry) {
	i := 0
	for i < len(args) && args[i] != "--" {
		i++
	}
	var entries []Entry
	if i < len(args) {
		for _, spec := range args[i+1:] {
			kind, rest, _ := strings.Cut(spec, ":")
			n, val, _ := strings.Cut(rest, "=")
			switch kind {
			case "file":
				entries = append(entries, Entry{Name: n, Body: val})
			case "dir":
				entries = append(entries, Entry{Name: n, Type: tar.TypeDir})
			case "symlink":
				entries = append(entries, Entry{Name: n, Type: tar.TypeSymlink, Linkname: val})
			case "link":
				entries = append(entries, Entry{Name: n, Type: tar.TypeLink, Linkname: val})
			default:
				ts.Fatalf("entry %q: want file:, dir:, symlink: or link:", spec)
			}
		}
	}
	return args[:i], entries
}

// dirImage builds a one-layer image of dir under prefix followed by extra.
func dirImage(ts *testscript.TestScript, dir, prefix string, labels map[string]string, extra []Entry) v1.Image {
	entries, err := DirEntries(ts.MkAbs(dir), prefix)
	ts.Check(err)
	l, err := Layer(append(entries, extra...)...)
	ts.Check(err)
	img, err := Image(labels, l)
	ts.Check(err)
	return img
}

func cmdPushImage(ts *testscript.TestScript, neg bool, args []string) {
	args, extra := splitEntries(ts, args)
	if neg || len(args) < 3 {
		ts.Fatalf("usage: pushimage REF DIR PREFIX [k=v...] [-- ENTRY...]")
	}
	img := dirImage(ts, args[1], args[2], parseLabels(ts, args[3:]), extra)
	ts.Check(Push(context.Background(), args[0], img))
}

func cmdPushTar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: pushtar REF [k=v...] -- ENTRY...")
	}
	args, entries := splitEntries(ts, args)
	labels := parseLabels(ts, args[1:])
	l, err := Layer(entries...)
	ts.Check(err)
	img, err := Image(labels, l)
	ts.Check(err)
	ts.Check(Push(context.Background(), args[0], img))
}

func cmdWriteImage(ts *testscript.TestScript, neg bool, args []string) {
	args, extra := splitEntries(ts, args)
	if neg || len(args) < 4 {
		ts.Fatalf("usage: writeimage oci|oci-archive|docker-archive PATH DIR PREFIX [k=v...] [-- ENTRY...]")
	}
	img := dirImage(ts, args[2], args[3], parseLabels(ts, args[4:]), extra)
	dst := ts.MkAbs(args[1])
	switch args[0] {
	case "oci", "oci-archive":
		dir := dst
		if args[0] == "oci-archive" {
			var err error
			dir, err = os.MkdirTemp("", "layout-*")
			ts.Check(err)
			defer os.RemoveAll(dir)
		}
		p, err := layout.Write(dir, empty.Index)
		ts.Check(err)
		ts.Check(p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "latest"})))
		if args[0] == "oci-archive" {
			var buf bytes.Buffer
			tw := tar.NewWriter(&buf)
			ts.Check(tw.AddFS(os.DirFS(dir)))
			ts.Check(tw.Close())
			ts.Check(os.WriteFile(dst, buf.Bytes(), 0o600))
		}
	case "docker-archive":
		tag, err := name.NewTag("example.com/opm/test:latest")
		ts.Check(err)
		ts.Check(tarball.WriteToFile(dst, tag, img))
	default:
		ts.Fatalf("unknown image kind %q", args[0])
	}
}

func cmdEmptyDir(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: emptydir DIR")
	}
	ents, err := os.ReadDir(ts.MkAbs(args[0]))
	ts.Check(err)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if empty := len(names) == 0; empty == neg {
		ts.Fatalf("%s holds %v", args[0], names)
	}
}

func cmdMkfifo(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: mkfifo PATH")
	}
	ts.Check(syscall.Mkfifo(ts.MkAbs(args[0]), 0o600))
}

// blobEntries lists the blobs of dir/blobs/sha256 (not the hidden lock or
// temporary files).
func blobEntries(ts *testscript.TestScript, dir string) []string {
	root := filepath.Join(ts.MkAbs(dir), "blobs", "sha256")
	ents, err := os.ReadDir(root)
	ts.Check(err)
	var out []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			out = append(out, filepath.Join(root, e.Name()))
		}
	}
	if len(out) == 0 {
		ts.Fatalf("no blobs in %s", root)
	}
	return out
}

func cmdSpoilBlobs(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: spoilblobs DIR swap|fifo")
	}
	for _, p := range blobEntries(ts, args[0]) {
		switch args[1] {
		case "swap":
			b, err := os.ReadFile(p)
			ts.Check(err)
			for i := range b {
				b[i] = 'x'
			}
			ts.Check(os.WriteFile(p, b, 0o600))
		case "fifo":
			ts.Check(os.Remove(p))
			ts.Check(syscall.Mkfifo(p, 0o600))
		default:
			ts.Fatalf("spoilblobs: unknown mode %q", args[1])
		}
	}
}

func cmdDirSize(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 2 {
		ts.Fatalf("usage: dirsize DIR MAX")
	}
	max, err := strconv.ParseInt(args[1], 10, 64)
	ts.Check(err)
	var total int64
	ts.Check(filepath.WalkDir(ts.MkAbs(args[0]), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		if strings.HasPrefix(d.Name(), ".tmp-") {
			ts.Fatalf("temporary file left: %s", p)
		}
		fi, err := d.Info()
		if err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return err
	}))
	if total > max {
		ts.Fatalf("%s holds %d bytes, more than %d", args[0], total, max)
	}
}

func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 2 {
		ts.Fatalf("usage: status CODE PROG [ARGS...]")
	}
	want, err := strconv.Atoi(args[0])
	ts.Check(err)
	got := 0
	if err := ts.Exec(args[1], args[2:]...); err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			ts.Fatalf("%s: %v", args[1], err)
		}
		got = ee.ExitCode()
	}
	if got != want {
		ts.Fatalf("%s exited with %d, want %d", args[1], got, want)
	}
}
