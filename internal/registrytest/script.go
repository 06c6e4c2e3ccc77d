package registrytest

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/rogpeppe/go-internal/testscript"
)

// ScriptCmds returns testscript commands for image tests:
//
//	registry start|stop            start (setting $REGISTRY) or stop a registry
//	registry fault NAME            401, corrupt (layer bytes), truncate, none
//	pushimage REF DIR PREFIX [k=v...]   push DIR under PREFIX as a one-layer image
//	pushtar REF [k=v...] -- ENTRY...    push a one-layer image of crafted entries:
//	                                    file:NAME=BODY, dir:NAME, symlink:NAME=TARGET, link:NAME=TARGET
//	writeimage oci|docker-archive PATH DIR PREFIX [k=v...]
//	                               write the image to an OCI layout or a docker archive
//	emptydir DIR                   fail unless DIR is empty
func ScriptCmds() map[string]func(ts *testscript.TestScript, neg bool, args []string) {
	return map[string]func(*testscript.TestScript, bool, []string){
		"registry":   cmdRegistry,
		"pushimage":  cmdPushImage,
		"pushtar":    cmdPushTar,
		"writeimage": cmdWriteImage,
		"emptydir":   cmdEmptyDir,
	}
}

type scriptRegistry struct {
	srv   *httptest.Server
	fault atomic.Value // string
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
		r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
			blob := req.Method == http.MethodGet && strings.Contains(req.URL.Path, "/blobs/sha256:")
			switch r.fault.Load().(string) {
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
	case "fault":
		if len(args) != 2 {
			ts.Fatalf("usage: registry fault 401|corrupt|truncate|none")
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

func cmdPushImage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 3 {
		ts.Fatalf("usage: pushimage REF DIR PREFIX [k=v...]")
	}
	img, err := DirImage(ts.MkAbs(args[1]), args[2], parseLabels(ts, args[3:]))
	ts.Check(err)
	ts.Check(Push(context.Background(), args[0], img))
}

func cmdPushTar(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 {
		ts.Fatalf("usage: pushtar REF [k=v...] -- ENTRY...")
	}
	i := 1
	for i < len(args) && args[i] != "--" {
		i++
	}
	labels := parseLabels(ts, args[1:i])
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
	l, err := Layer(entries...)
	ts.Check(err)
	img, err := Image(labels, l)
	ts.Check(err)
	ts.Check(Push(context.Background(), args[0], img))
}

func cmdWriteImage(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 4 {
		ts.Fatalf("usage: writeimage oci|docker-archive PATH DIR PREFIX [k=v...]")
	}
	img, err := DirImage(ts.MkAbs(args[2]), args[3], parseLabels(ts, args[4:]))
	ts.Check(err)
	dst := ts.MkAbs(args[1])
	switch args[0] {
	case "oci":
		p, err := layout.Write(dst, empty.Index)
		ts.Check(err)
		ts.Check(p.AppendImage(img, layout.WithAnnotations(map[string]string{"org.opencontainers.image.ref.name": "latest"})))
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
