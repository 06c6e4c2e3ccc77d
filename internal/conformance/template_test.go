package conformance

import (
	"bufio"
	"context"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/google/go-containerregistry/pkg/v1/remote"
	"sigs.k8s.io/yaml"

	"github.com/opmkit/opm/internal/registrytest"
)

// The template/ group's cases that render bundle images list them in
// images.tsv (REF<TAB>DIR, REF = quay.io/opmkit-conformance/NAME:TAG). As
// the suite's README says, they are served from a registry on loopback
// that speaks TLS with a certificate for 127.0.0.1, trusted through
// SSL_CERT_FILE, and opm finds them through a registries.conf that
// rewrites the quay.io/opmkit-conformance prefix. Here the registry is
// go-containerregistry's, in this process, started for the first case that
// needs it and stopped when the tests end; every case gets its own
// namespace (CASE/opmkit-conformance/...), as cases may push different
// images under one REF.

const templatePrefix = "quay.io/opmkit-conformance"

type templateRegistry struct {
	srv    *httptest.Server
	host   string
	dir    string // CA file and registries.conf files
	caFile string

	mu    sync.Mutex
	cases map[string]*caseImages
}

type caseImages struct {
	once sync.Once
	conf string
	err  error
}

var (
	tmplRegOnce sync.Once
	tmplReg     *templateRegistry
	tmplRegErr  error
)

// runEnv returns the environment a run needs beyond the common one: for a
// case with images.tsv, the registry (started and filled on first use),
// its registries.conf, the CA and a private blob cache.
func runEnv(t *testing.T, r runSpec, work string) []string {
	tsv := filepath.Join(r.caseDir, "images.tsv")
	if _, err := os.Stat(tsv); err != nil {
		return nil
	}
	tmplRegOnce.Do(func() { tmplReg, tmplRegErr = startTemplateRegistry() })
	if tmplRegErr != nil {
		t.Fatalf("template registry: %v", tmplRegErr)
	}
	conf, err := tmplReg.prepare(r.caseDir, tsv)
	if err != nil {
		t.Fatalf("pushing the images of %s: %v", r.caseDir, err)
	}
	return []string{
		"CONTAINERS_REGISTRIES_CONF=" + conf,
		"SSL_CERT_FILE=" + tmplReg.caFile,
		"XDG_CACHE_HOME=" + filepath.Join(work, ".cache"),
	}
}

// stopTemplateRegistry stops the registry if it was started.
func stopTemplateRegistry() {
	if tmplReg != nil {
		tmplReg.srv.Close()
		os.RemoveAll(tmplReg.dir)
	}
}

func startTemplateRegistry() (*templateRegistry, error) {
	dir, err := os.MkdirTemp("", "opm-conformance-registry-")
	if err != nil {
		return nil, err
	}
	srv := httptest.NewUnstartedServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	// Clients that try plain HTTP on loopback first cause handshake noise.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	tr := &templateRegistry{srv: srv, host: strings.TrimPrefix(srv.URL, "https://"), dir: dir, cases: map[string]*caseImages{}}
	tr.caFile = filepath.Join(dir, "ca.pem")
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(tr.caFile, ca, 0o644); err != nil {
		srv.Close()
		return nil, err
	}
	return tr, nil
}

// prepare pushes the images of one case (once) and returns its
// registries.conf.
func (tr *templateRegistry) prepare(caseDir, tsv string) (string, error) {
	tr.mu.Lock()
	c := tr.cases[caseDir]
	if c == nil {
		c = &caseImages{}
		tr.cases[caseDir] = c
	}
	tr.mu.Unlock()
	c.once.Do(func() {
		ns := fmt.Sprintf("%s/%s", tr.host, strings.ToLower(filepath.Base(caseDir)))
		c.err = tr.push(caseDir, tsv, ns)
		if c.err != nil {
			return
		}
		c.conf = filepath.Join(tr.dir, filepath.Base(caseDir)+".conf")
		c.err = os.WriteFile(c.conf, []byte(fmt.Sprintf("[[registry]]\nprefix = %q\nlocation = %q\ninsecure = true\n", templatePrefix, ns+"/opmkit-conformance")), 0o644)
	})
	return c.conf, c.err
}

// push pushes every REF of tsv under ns, as the suite's README says.
func (tr *templateRegistry) push(caseDir, tsv, ns string) error {
	f, err := os.Open(tsv)
	if err != nil {
		return err
	}
	defer f.Close()
	opt := remote.WithTransport(tr.srv.Client().Transport)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		ref, dir, ok := strings.Cut(line, "\t")
		if !ok || !strings.HasPrefix(ref, templatePrefix+"/") {
			return fmt.Errorf("images.tsv: bad line %q", line)
		}
		dir = filepath.Join(caseDir, dir)
		labels, prefix, err := imageShape(dir)
		if err != nil {
			return err
		}
		img, err := registrytest.DirImage(dir, prefix, labels)
		if err != nil {
			return err
		}
		target := ns + "/opmkit-conformance/" + strings.TrimPrefix(ref, templatePrefix+"/")
		if err := registrytest.Push(context.Background(), target, img, opt); err != nil {
			return fmt.Errorf("push %s: %w", target, err)
		}
	}
	return sc.Err()
}

// imageShape says how to build the image of dir: a bundle (manifests/ and
// metadata/ at the root, labels from metadata/annotations.yaml) or catalog
// content (under /configs, with the configs label).
func imageShape(dir string) (labels map[string]string, prefix string, err error) {
	isDir := func(p string) bool { st, err := os.Stat(p); return err == nil && st.IsDir() }
	if !isDir(filepath.Join(dir, "manifests")) || !isDir(filepath.Join(dir, "metadata")) {
		return map[string]string{registrytest.ConfigsLabel: "/configs"}, "configs", nil
	}
	data, err := os.ReadFile(filepath.Join(dir, "metadata", "annotations.yaml"))
	if os.IsNotExist(err) {
		return nil, "", nil
	}
	if err != nil {
		return nil, "", err
	}
	var a struct {
		Annotations map[string]string `json:"annotations"`
	}
	if err := yaml.Unmarshal(data, &a); err != nil {
		return nil, "", fmt.Errorf("%s: %w", dir, err)
	}
	return a.Annotations, "", nil
}
