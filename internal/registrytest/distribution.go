package registrytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/v1/remote"
)

// DistributionBinary is the registry server Distribution starts.
const DistributionBinary = "/usr/bin/docker-registry"

// Dist is a running distribution registry with TLS and basic auth.
type Dist struct {
	// Host is "127.0.0.1:PORT".
	Host string
	// CAFile is the PEM file of the CA that signed the server certificate.
	CAFile string
	// AuthFile is a docker config.json holding the credentials.
	AuthFile string
	// Username and Password are the credentials htpasswd accepts.
	Username, Password string
	// Dir holds the configuration, certificates and storage.
	Dir string
}

// Distribution starts /usr/bin/docker-registry on 127.0.0.1 with TLS (a CA
// made for the test) and htpasswd basic auth. It skips the test when the
// binary or htpasswd (apache2-utils) is absent. The server stops when the
// test ends.
func Distribution(t testing.TB) *Dist {
	t.Helper()
	if _, err := os.Stat(DistributionBinary); err != nil {
		t.Skipf("skipping: %s not found (install Debian's docker-registry package)", DistributionBinary)
	}
	htpasswd, err := exec.LookPath("htpasswd")
	if err != nil {
		t.Skip("skipping: htpasswd not found (install Debian's apache2-utils package)")
	}
	d := &Dist{Dir: t.TempDir(), Username: "opm", Password: "s3cret-pass"}
	caPEM, certPEM, keyPEM, err := makeCerts()
	if err != nil {
		t.Fatal(err)
	}
	d.CAFile = filepath.Join(d.Dir, "ca.pem")
	write := func(name string, b []byte) string {
		p := filepath.Join(d.Dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	write("ca.pem", caPEM)
	crt := write("server.crt", certPEM)
	key := write("server.key", keyPEM)
	out, err := exec.Command(htpasswd, "-Bbn", d.Username, d.Password).Output()
	if err != nil {
		t.Fatalf("htpasswd: %v", err)
	}
	pw := write("htpasswd", out)
	port, err := freePort()
	if err != nil {
		t.Fatal(err)
	}
	d.Host = fmt.Sprintf("127.0.0.1:%d", port)
	cfg := fmt.Sprintf(`version: 0.1
log:
  level: error
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: %s
  delete:
    enabled: true
http:
  addr: %s
  secret: opm-test-secret
  tls:
    certificate: %s
    key: %s
auth:
  htpasswd:
    realm: opm-test
    path: %s
`, filepath.Join(d.Dir, "data"), d.Host, crt, key, pw)
	cfgFile := write("config.yml", []byte(cfg))
	auth := base64.StdEncoding.EncodeToString([]byte(d.Username + ":" + d.Password))
	d.AuthFile = write("auth.json", []byte(fmt.Sprintf(`{"auths":{%q:{"auth":%q}}}`, d.Host, auth)))

	logf, err := os.Create(filepath.Join(d.Dir, "registry.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(DistributionBinary, "serve", cfgFile)
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", DistributionBinary, err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		logf.Close()
	})
	if err := d.waitReady(10 * time.Second); err != nil {
		b, _ := os.ReadFile(logf.Name())
		t.Fatalf("registry did not start: %v\n%s", err, b)
	}
	return d
}

// Keychain returns a keychain with the registry's credentials.
func (d *Dist) Keychain() authn.Keychain {
	return staticKeychain{authn.FromConfig(authn.AuthConfig{Username: d.Username, Password: d.Password})}
}

// RemoteOptions returns options to push to the registry.
func (d *Dist) RemoteOptions() ([]remote.Option, error) {
	pool, err := d.pool()
	if err != nil {
		return nil, err
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool}
	return []remote.Option{remote.WithTransport(tr), remote.WithAuthFromKeychain(d.Keychain())}, nil
}

func (d *Dist) pool() (*x509.CertPool, error) {
	b, err := os.ReadFile(d.CAFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(b)
	return pool, nil
}

func (d *Dist) waitReady(limit time.Duration) error {
	pool, err := d.pool()
	if err != nil {
		return err
	}
	c := &http.Client{Timeout: time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	deadline := time.Now().Add(limit)
	var last error
	for time.Now().Before(deadline) {
		resp, err := c.Get("https://" + d.Host + "/v2/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusUnauthorized {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		last = err
		time.Sleep(50 * time.Millisecond)
	}
	return last
}

type staticKeychain struct{ a authn.Authenticator }

func (k staticKeychain) Resolve(authn.Resource) (authn.Authenticator, error) { return k.a, nil }

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// makeCerts makes a CA and a server certificate for 127.0.0.1 and
// localhost, PEM encoded.
func makeCerts() (caPEM, certPEM, keyPEM []byte, err error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	ca := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "opm test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign,
		BasicConstraintsValid: true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	srv := &x509.Certificate{
		SerialNumber: big.NewInt(2),
		Subject:      pkix.Name{CommonName: "127.0.0.1"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames:     []string{"localhost"},
	}
	der, err := x509.CreateCertificate(rand.Reader, srv, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, nil, err
	}
	kb, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, nil, err
	}
	enc := func(typ string, b []byte) []byte {
		return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: b})
	}
	return enc("CERTIFICATE", caDER), enc("CERTIFICATE", der), enc("EC PRIVATE KEY", kb), nil
}
