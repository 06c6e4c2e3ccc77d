package image_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/registriesconf"
)

// registries.conf through image.Open: prefix rewrite, mirrors tried in
// order then the location, insecure locations (unverified TLS, plain
// HTTP), blocked registries. Every image is pulled by the reference the
// user wrote (quay.io/...), which no test can reach: only the rewrite makes
// the pulls work.

// rcImage is a one-file catalog image whose labels name where it was
// pushed, so a test can tell which registry served it.
func rcImage(t *testing.T, where string) v1.Image {
	t.Helper()
	l, err := registrytest.Layer(registrytest.Entry{Name: "configs/where.txt", Body: where})
	if err != nil {
		t.Fatal(err)
	}
	img, err := registrytest.Image(map[string]string{registrytest.ConfigsLabel: "/configs", "where": where}, l)
	if err != nil {
		t.Fatal(err)
	}
	return img
}

func rcPush(t *testing.T, ref string, img v1.Image, opts ...remote.Option) {
	t.Helper()
	if err := registrytest.Push(context.Background(), ref, img, opts...); err != nil {
		t.Fatalf("push %s: %v", ref, err)
	}
}

func rcConf(t *testing.T, text string) *registriesconf.Config {
	t.Helper()
	c, err := registriesconf.Parse([]byte(text), "registries.conf")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func rcOpen(t *testing.T, ref string, conf *registriesconf.Config, more ...image.Option) (image.Image, error) {
	t.Helper()
	o := append([]image.Option{image.WithCacheDir(t.TempDir()), image.WithRetries(0, time.Millisecond), image.WithTimeout(20 * time.Second), image.WithRegistriesConf(conf)}, more...)
	img, err := image.Open(context.Background(), ref, o...)
	if err == nil {
		t.Cleanup(func() { img.Close() })
	}
	return img, err
}

func TestRegistriesConfRewrite(t *testing.T) {
	reg := registrytest.New(t)
	rcPush(t, reg.Host+"/mirrored/team/catalog:v1", rcImage(t, "local"))
	conf := rcConf(t, fmt.Sprintf(`
[[registry]]
prefix = "quay.io"
location = "does-not-exist.invalid"

[[registry]]
prefix = "quay.io/team"
location = "%s/mirrored/team"
`, reg.Host))

	img, err := rcOpen(t, "quay.io/team/catalog:v1", conf)
	if err != nil {
		t.Fatal(err)
	}
	if img.Ref() != "quay.io/team/catalog:v1" {
		t.Errorf("Ref() = %q, want the reference as given", img.Ref())
	}
	if img.Labels()["where"] != "local" {
		t.Errorf("labels %v", img.Labels())
	}
	dst := t.TempDir()
	if err := img.Extract(context.Background(), dst); err != nil {
		t.Fatal(err)
	}

	// The longest prefix wins: quay.io/teamx is not under quay.io/team, so
	// the quay.io table applies and its location does not resolve.
	_, err = rcOpen(t, "quay.io/teamx/catalog:v1", conf)
	if err == nil || !strings.Contains(err.Error(), "from does-not-exist.invalid/teamx/catalog:v1 (registries.conf:2)") {
		t.Errorf("quay.io/teamx: %v", err)
	}

	// By digest too.
	_, err = rcOpen(t, "quay.io/team/catalog@"+img.Digest(), conf)
	if err != nil {
		t.Errorf("by digest: %v", err)
	}
}

func TestRegistriesConfMirrors(t *testing.T) {
	origin := registrytest.New(t)
	empty := registrytest.New(t)
	mirror := registrytest.New(t)
	down := registrytest.New(t)
	down.Close()
	rcPush(t, origin.Host+"/ns/catalog:v1", rcImage(t, "origin"))
	rcPush(t, mirror.Host+"/cache/ns/catalog:v1", rcImage(t, "mirror"))
	rcPush(t, origin.Host+"/ns/only-origin:v1", rcImage(t, "origin"))

	conf := rcConf(t, fmt.Sprintf(`
[[registry]]
prefix = "quay.io/ns"
location = "%[1]s/ns"

[[registry.mirror]]
location = "%[2]s/ns"

[[registry.mirror]]
location = "%[3]s/ns"

[[registry.mirror]]
location = "%[4]s/cache/ns"
`, origin.Host, down.Host, empty.Host, mirror.Host))

	// The first mirror that has the image serves it; the origin is not
	// asked.
	img, err := rcOpen(t, "quay.io/ns/catalog:v1", conf)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Labels()["where"]; got != "mirror" {
		t.Errorf("served by %q, want mirror", got)
	}
	if err := img.Extract(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	if origin.ManifestGets() != 0 || empty.ManifestGets() != 1 {
		t.Errorf("manifest requests: origin %d (want 0), empty mirror %d (want 1)", origin.ManifestGets(), empty.ManifestGets())
	}

	// No mirror has it: the origin does.
	img, err = rcOpen(t, "quay.io/ns/only-origin:v1", conf)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Labels()["where"]; got != "origin" {
		t.Errorf("served by %q, want origin", got)
	}

	// Nobody has it: every source is named, in order, and the user's
	// reference leads the message.
	_, err = rcOpen(t, "quay.io/ns/missing:v1", conf)
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	want := []string{
		"pulling quay.io/ns/missing:v1: ",
		"from mirror " + down.Host + "/ns/missing:v1 (registries.conf:2): ",
		"from mirror " + empty.Host + "/ns/missing:v1 (registries.conf:2): ",
		"from mirror " + mirror.Host + "/cache/ns/missing:v1 (registries.conf:2): ",
		"from " + origin.Host + "/ns/missing:v1 (registries.conf:2): ",
	}
	last := -1
	for _, w := range want {
		i := strings.Index(msg, w)
		if i <= last {
			t.Fatalf("error does not list %q in order:\n%s", w, msg)
		}
		last = i
	}
}

// tlsRegistry serves an in-process registry over TLS with httptest's
// certificate, which the client does not trust.
func tlsRegistry(t *testing.T) (host string, client *http.Client) {
	t.Helper()
	srv := httptest.NewTLSServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	t.Cleanup(srv.Close)
	return strings.TrimPrefix(srv.URL, "https://"), srv.Client()
}

func TestRegistriesConfInsecureTLS(t *testing.T) {
	host, client := tlsRegistry(t)
	rcPush(t, host+"/ns/catalog:v1", rcImage(t, "tls"), remote.WithTransport(client.Transport))

	secure := rcConf(t, fmt.Sprintf("[[registry]]\nprefix = \"quay.io/ns\"\nlocation = \"%s/ns\"\n", host))
	if _, err := rcOpen(t, "quay.io/ns/catalog:v1", secure); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("unverified certificate accepted without insecure = true: %v", err)
	}

	insecure := rcConf(t, fmt.Sprintf("[[registry]]\nprefix = \"quay.io/ns\"\nlocation = \"%s/ns\"\ninsecure = true\n", host))
	img, err := rcOpen(t, "quay.io/ns/catalog:v1", insecure)
	if err != nil {
		t.Fatal(err)
	}
	if err := img.Extract(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
}

// TestRegistriesConfInsecureHTTP uses a host name that is not loopback
// (so the client would insist on HTTPS), dialled to a plain-HTTP registry.
func TestRegistriesConfInsecureHTTP(t *testing.T) {
	reg := registrytest.New(t)
	_, port, _ := net.SplitHostPort(reg.Host)
	rcPush(t, reg.Host+"/ns/catalog:v1", rcImage(t, "http"))
	var mu sync.Mutex
	var dialled []string
	tr := &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		mu.Lock()
		dialled = append(dialled, addr)
		mu.Unlock()
		if h, _, _ := net.SplitHostPort(addr); h != "registry.test" {
			return nil, fmt.Errorf("unexpected dial %s", addr)
		}
		return (&net.Dialer{}).DialContext(ctx, network, reg.Host)
	}}
	loc := "registry.test:" + port

	secure := rcConf(t, fmt.Sprintf("[[registry]]\nprefix = \"quay.io/ns\"\nlocation = \"%s/ns\"\n", loc))
	if _, err := rcOpen(t, "quay.io/ns/catalog:v1", secure, image.WithTransport(tr)); err == nil {
		t.Error("plain HTTP used without insecure = true")
	}

	insecure := rcConf(t, fmt.Sprintf("[[registry]]\nprefix = \"quay.io/ns\"\nlocation = \"%s/ns\"\ninsecure = true\n", loc))
	img, err := rcOpen(t, "quay.io/ns/catalog:v1", insecure, image.WithTransport(tr))
	if err != nil {
		t.Fatal(err)
	}
	if err := img.Extract(context.Background(), t.TempDir()); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(dialled) == 0 {
		t.Error("the registry was not dialled through registry.test")
	}
}

func TestRegistriesConfBlocked(t *testing.T) {
	reg := registrytest.New(t)
	rcPush(t, reg.Host+"/ns/catalog:v1", rcImage(t, "blocked"))
	conf := rcConf(t, fmt.Sprintf(`
[[registry]]
prefix = "quay.io/ns"
location = "%s/ns"
blocked = true
`, reg.Host))
	_, err := rcOpen(t, "quay.io/ns/catalog:v1", conf)
	if !errors.Is(err, registriesconf.ErrBlocked) {
		t.Fatalf("got %v, want a blocked error", err)
	}
	if want := `pulling quay.io/ns/catalog:v1: registry "quay.io/ns" is blocked (blocked = true in registries.conf:2)`; err.Error() != want {
		t.Errorf("message:\ngot  %s\nwant %s", err, want)
	}
	if reg.ManifestGets() != 0 {
		t.Errorf("a blocked registry was asked %d times", reg.ManifestGets())
	}
	// Other references are not affected.
	rcPush(t, reg.Host+"/other/catalog:v1", rcImage(t, "other"))
	if _, err := rcOpen(t, reg.Host+"/other/catalog:v1", conf); err != nil {
		t.Errorf("unrelated reference: %v", err)
	}
}

// TestRegistriesConfFromEnvironment reads the file named by
// CONTAINERS_REGISTRIES_CONF when no configuration is given.
func TestRegistriesConfFromEnvironment(t *testing.T) {
	reg := registrytest.New(t)
	rcPush(t, reg.Host+"/ns/catalog:v1", rcImage(t, "env"))
	file := t.TempDir() + "/registries.conf"
	if err := rcWriteFile(file, fmt.Sprintf("[[registry]]\nprefix = \"quay.io/ns\"\nlocation = \"%s/ns\"\n", reg.Host)); err != nil {
		t.Fatal(err)
	}
	t.Setenv(registriesconf.EnvVar, file)
	t.Setenv("HOME", t.TempDir())
	img, err := image.Open(context.Background(), "quay.io/ns/catalog:v1", image.WithCacheDir(t.TempDir()), image.WithRetries(0, time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	img.Close()

	if err := rcWriteFile(file, "[[registry]]\nlocation = \"https://nope\"\n"); err != nil {
		t.Fatal(err)
	}
	_, err = image.Open(context.Background(), "quay.io/ns/catalog:v1", image.WithCacheDir(t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "registries.conf: "+file+":1: invalid location") {
		t.Errorf("broken file: %v", err)
	}
}

func rcWriteFile(p, s string) error { return os.WriteFile(p, []byte(s), 0o644) }

// A base image (opm build) is pulled through registries.conf like any
// image, and a push goes to the rewritten location (never a mirror) or is
// refused when the registry is blocked.
func TestRegistriesConfBuild(t *testing.T) {
	reg := registrytest.New(t)
	ctx := context.Background()
	rcPush(t, reg.Host+"/mirrored/team/base:v1", rcImage(t, "local"))
	conf := rcConf(t, fmt.Sprintf(`
[[registry]]
prefix = "quay.io/team"
location = "%s/mirrored/team"

[[registry]]
location = "blocked.example.com"
blocked = true
`, reg.Host))
	s := image.NewSession(image.WithCacheDir(t.TempDir()), image.WithRetries(0, time.Millisecond), image.WithTimeout(20*time.Second), image.WithRegistriesConf(conf))
	defer s.Close()

	b, err := s.OpenBase(ctx, "quay.io/team/base:v1", nil)
	if err != nil {
		t.Fatalf("base through the rewrite: %v", err)
	}
	b.Close()

	dst, err := image.ParseDestination("quay.io/team/pushed:v1", false)
	if err != nil {
		t.Fatal(err)
	}
	img := rcImage(t, "pushed")
	if err := s.Write(ctx, dst, img, image.WriteOptions{}); err != nil {
		t.Fatalf("push through the rewrite: %v", err)
	}
	got, err := rcOpen(t, reg.Host+"/mirrored/team/pushed:v1", &registriesconf.Config{})
	if err != nil {
		t.Fatalf("the push did not land at the rewritten location: %v", err)
	}
	if got.Labels()["where"] != "pushed" {
		t.Errorf("labels %v", got.Labels())
	}

	dst, err = image.ParseDestination("blocked.example.com/x:v1", false)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, dst, img, image.WriteOptions{}); !errors.Is(err, registriesconf.ErrBlocked) {
		t.Errorf("push to a blocked registry: got %v", err)
	}
}
