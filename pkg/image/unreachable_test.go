package image_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/opmkit/opm/internal/registrytest"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/registriesconf"
)

// dnsFailure answers every request as a resolver with no network would.
type dnsFailure struct{}

func (dnsFailure) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, &net.OpError{Op: "dial", Net: "tcp", Err: &net.DNSError{Err: "no such host", Name: r.URL.Hostname(), IsNotFound: true}}
}

// TestUnreachable: a pull whose registry cannot be reached (a name that
// does not resolve, a refused connection) says so, names the image and
// says what works offline; a registry that answers is not "unreachable".
func TestUnreachable(t *testing.T) {
	ctx := context.Background()
	base := []image.Option{image.WithCacheDir("-"), image.WithRetries(0, 0), image.WithRegistriesConf(&registriesconf.Config{})}
	_, err := image.Open(ctx, "quay.io/example/foo-bundle:v1", append(base, image.WithTransport(dnsFailure{}))...)
	if !errors.Is(err, image.ErrUnreachable) {
		t.Fatalf("DNS failure: %v, want ErrUnreachable", err)
	}
	for _, want := range []string{
		"pulling quay.io/example/foo-bundle:v1: the registry could not be reached (",
		"lookup quay.io: no such host",
		"registries.conf",
		"skopeo copy docker://quay.io/example/foo-bundle:v1 oci:DIR:TAG",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("DNS failure: %q lacks %q", err, want)
		}
	}

	down := registrytest.New(t)
	ref := down.Host + "/gone:v1"
	down.Close()
	if _, err := image.Open(ctx, ref, base...); !errors.Is(err, image.ErrUnreachable) {
		t.Errorf("registry down: %v, want ErrUnreachable", err)
	}

	up := registrytest.New(t)
	_, err = image.Open(ctx, up.Host+"/nothing:v1", base...)
	if err == nil || errors.Is(err, image.ErrUnreachable) || strings.Contains(err.Error(), "could not be reached") {
		t.Errorf("registry up, repository missing: %v, want an error that is not ErrUnreachable", err)
	}
}
