package conformance

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/v1/layout"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/health/grpc_health_v1"

	"github.com/opmkit/opm/internal/catalogpod"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/serve/jsoncache"
)

// TestCatalogPod builds catalog images of conformance catalogs with the
// built opm (`opm build catalog --base-image self`, so the image's server is
// this opm) and runs them as OLM's catalog pods run them (the Pod of
// operator-lifecycle-manager's pkg/controller/registry/reconciler), with no
// container engine: the image's root filesystem unpacked by pkg/image and
// its process run by internal/catalogpod in its own mount, PID and network
// namespaces, as uid 1001, with a read-only root.
//
// Default mode: the image's entrypoint and command, with a fresh tmpfs at
// /tmp; probed as the kubelet's native gRPC probes do (grpc.health.v1
// Check, service "", on port 50051 inside the pod's network; also
// gzip-compressed, as grpc-health-probe -gzip sends it); the case's
// recorded upstream calls replayed; SIGTERM ends it promptly with status 0.
// It must load its pre-built cache, never index the catalog.
//
// extractContent mode: a container of the catalog image copies /configs
// and the cache directory to an emptyDir as OLM's copy-content does;
// upstream's integrity digest of the copies must match the image's (what
// upstream's opm checks before serving); then the serving container runs
// `opm serve /extracted-catalog/catalog --cache-dir=/extracted-catalog/cache`
// with a read-only root. OLM runs upstream's opm image there; upstream is
// not available here, so this opm stands in for it, given
// --cache-enforce-integrity (upstream enforces the cache's integrity by
// default when --cache-dir is set; this opm only when asked).
func TestCatalogPod(t *testing.T) {
	suite, err := suiteDir()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(suite, "serve")); err != nil {
		t.Skipf("conformance suite not found at %s; skipping", suite)
	}
	if err := catalogpod.Supported(); err != nil {
		t.Skipf("skipping: %v", err)
	}
	for _, name := range []string{"kubedoop-catalog", "trustee-fbc-v4.16"} {
		t.Run(name, func(t *testing.T) {
			caseDir := filepath.Join(suite, "serve", name)
			input, err := serveCaseInput(suite, caseDir)
			if err != nil {
				t.Fatal(err)
			}
			_, calls := readCalls(t, caseDir)
			img := buildPodImage(t, input)

			t.Run("default", func(t *testing.T) {
				p := startPod(t, catalogpod.Container{
					RootFS:       img.rootfs,
					Args:         append(append([]string{}, img.entrypoint...), img.cmd...),
					Env:          img.env,
					UID:          1001,
					GID:          0,
					ReadOnlyRoot: true,
					TmpfsTmp:     true,
				})
				checkPod(t, p, calls)
				if s := p.Output(); !strings.Contains(s, "cache=/var/cache/opm") || strings.Contains(s, "level=WARN") {
					t.Errorf("the server did not serve from the image's cache without a warning:\n%s", s)
				}
			})

			t.Run("extractContent", func(t *testing.T) {
				extracted := t.TempDir()
				if err := os.Chmod(extracted, 0o777); err != nil { // an emptyDir
					t.Fatal(err)
				}
				var out bytes.Buffer
				err := catalogpod.Copy(catalogpod.Container{
					RootFS:       img.rootfs,
					UID:          1001,
					ReadOnlyRoot: true,
					Mounts:       []catalogpod.Mount{{Source: extracted, Target: "/extracted-catalog"}},
					Stderr:       &out,
				}, [2]string{"/configs", "/extracted-catalog/catalog"}, [2]string{"/var/cache/opm", "/extracted-catalog/cache"})
				if err != nil {
					t.Fatalf("copy-content: %v\n%s", err, out.String())
				}
				// What upstream's opm checks before it serves.
				if err := jsoncache.Check(context.Background(), filepath.Join(extracted, "catalog"), filepath.Join(extracted, "cache")); err != nil {
					t.Fatalf("upstream's integrity check of the copied cache: %v", err)
				}
				p := startPod(t, catalogpod.Container{
					RootFS: img.rootfs,
					// Our opm stands in for OLM's (upstream's) opm image.
					Args:         []string{"/bin/opm", "serve", "/extracted-catalog/catalog", "--cache-dir=/extracted-catalog/cache", "--cache-enforce-integrity"},
					Env:          img.env,
					UID:          1001,
					ReadOnlyRoot: true,
					Mounts:       []catalogpod.Mount{{Source: extracted, Target: "/extracted-catalog"}},
				})
				checkPod(t, p, calls)
			})
		})
	}
}

type podImage struct {
	rootfs          string
	entrypoint, cmd []string
	env             []string
}

// buildPodImage builds the catalog image of input into an OCI layout and
// unpacks its root filesystem.
func buildPodImage(t *testing.T, input string) podImage {
	t.Helper()
	tmp := t.TempDir()
	lay := filepath.Join(tmp, "layout")
	cmd := exec.Command(opmBin, "build", "catalog", input, "--base-image", "self", "-t", "oci:"+lay+":v1")
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1700000000")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("opm build catalog: %v\n%s", err, out)
	}
	idx, err := layout.ImageIndexFromPath(lay)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil || len(im.Manifests) != 1 {
		t.Fatalf("layout index: %v, %v", im, err)
	}
	vi, err := idx.Image(im.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	cf, err := vi.ConfigFile()
	if err != nil {
		t.Fatal(err)
	}
	if cf.Config.User != "1001" || cf.Config.Labels["operators.operatorframework.io.index.configs.v1"] != "/configs" {
		t.Fatalf("image config: user %q, labels %v", cf.Config.User, cf.Config.Labels)
	}
	rootfs := filepath.Join(tmp, "rootfs")
	if err := os.Mkdir(rootfs, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opened, err := image.Open(ctx, "oci:"+lay+":v1", image.WithFileModes(), image.WithCacheDir("-"))
	if err != nil {
		t.Fatal(err)
	}
	defer opened.Close()
	if err := opened.Extract(ctx, rootfs); err != nil {
		t.Fatal(err)
	}
	return podImage{rootfs: rootfs, entrypoint: cf.Config.Entrypoint, cmd: cf.Config.Cmd, env: cf.Config.Env}
}

func startPod(t *testing.T, c catalogpod.Container) *catalogpod.Process {
	t.Helper()
	p, err := catalogpod.Start(c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-p.Exited():
		default:
			p.Kill()
		}
	})
	return p
}

// checkPod probes the pod as the kubelet does until it is ready, replays
// the recorded calls, and stops it with SIGTERM.
func checkPod(t *testing.T, p *catalogpod.Process, calls []serveCall) {
	t.Helper()
	conn, err := grpc.NewClient("passthrough:///pod:50051",
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, _ string) (net.Conn, error) { return p.Dial(ctx, "127.0.0.1:50051") }),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	hc := grpc_health_v1.NewHealthClient(conn)
	deadline := time.Now().Add(serveHealthLimit)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := hc.Check(ctx, &grpc_health_v1.HealthCheckRequest{})
		cancel()
		if err == nil && resp.Status == grpc_health_v1.HealthCheckResponse_SERVING {
			break
		}
		select {
		case <-p.Exited():
			t.Fatalf("the pod exited (%d) before it was ready:\n%s", p.ExitCode(), p.Output())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("not ready after %v: %v\n%s", serveHealthLimit, err, p.Output())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// grpc-health-probe -gzip
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	resp, err := hc.Check(ctx, &grpc_health_v1.HealthCheckRequest{}, grpc.UseCompressor(gzip.Name))
	cancel()
	if err != nil || resp.Status != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Errorf("gzip-compressed health check: %v, %v", resp, err)
	}
	var bad []string
	for i, c := range calls {
		if d := replay(conn, c); d != "" {
			bad = append(bad, fmt.Sprintf("call %d %s %s: %s", i, c.Method, c.Request, d))
		}
	}
	if len(bad) > 0 {
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("... and %d more", len(bad)-5))
		}
		t.Errorf("%d of %d recorded calls differ:\n%s", len(bad), len(calls), strings.Join(bad, "\n"))
	}
	start := time.Now()
	if err := p.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.Exited():
	case <-time.After(5 * time.Second):
		t.Fatalf("still running 5s after SIGTERM:\n%s", p.Output())
	}
	if code := p.ExitCode(); code != 0 {
		t.Errorf("exit status %d after SIGTERM, want 0:\n%s", code, p.Output())
	}
	t.Logf("%d calls replayed; stopped %v after SIGTERM", len(calls), time.Since(start).Round(time.Millisecond))
}

// readCalls reads a serve case's recorded calls, in file order.
func readCalls(t *testing.T, caseDir string) ([]string, []serveCall) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(caseDir, "calls", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("case %s has no calls", caseDir)
	}
	sort.Strings(files)
	calls := make([]serveCall, len(files))
	for i, f := range files {
		if err := readJSON(f, &calls[i]); err != nil {
			t.Fatal(err)
		}
	}
	return files, calls
}
