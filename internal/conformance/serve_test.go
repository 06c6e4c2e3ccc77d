package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/opmkit/opm/pkg/api"
)

// The serve/ group of the conformance suite: each case is a catalog and
// either recorded gRPC calls (run kind serve/calls) or a start-up upstream
// refuses (serve/startup). The built binary serves the catalog on
// 127.0.0.1, every call is replayed through a gRPC client built from
// pkg/api's proto, and the answers are compared as the suite's README says:
// the same status code and message, and the same messages as parsed JSON,
// in order or as a multiset, or equal to one of any_of.

const (
	serveKindCalls   = "serve/calls"
	serveKindStartup = "serve/startup"
	serveHealthLimit = 60 * time.Second
	serveCallJobs    = 4
)

type serveCall struct {
	Method   string              `json:"method"`
	Request  json.RawMessage     `json:"request"`
	Headers  []string            `json:"headers"` // "name: value"
	Code     string              `json:"code"`
	Message  string              `json:"message"`
	Response []json.RawMessage   `json:"response"`
	Ordered  bool                `json:"ordered"`
	AnyOf    [][]json.RawMessage `json:"any_of"`
}

type serveStartup struct {
	Healthy  bool   `json:"healthy"`
	ExitCode int    `json:"exit_code"`
	Error    string `json:"error"`
}

// rpc describes one method: its request and response types and whether
// the response is a stream.
type rpc struct {
	req, resp func() proto.Message
	stream    bool
}

func msg[T any, P interface {
	*T
	proto.Message
}]() func() proto.Message {
	return func() proto.Message { return P(new(T)) }
}

var serveRPCs = map[string]rpc{
	"/api.Registry/ListPackages":                       {msg[api.ListPackageRequest](), msg[api.PackageName](), true},
	"/api.Registry/GetPackage":                         {msg[api.GetPackageRequest](), msg[api.Package](), false},
	"/api.Registry/GetBundle":                          {msg[api.GetBundleRequest](), msg[api.Bundle](), false},
	"/api.Registry/GetBundleForChannel":                {msg[api.GetBundleInChannelRequest](), msg[api.Bundle](), false},
	"/api.Registry/GetChannelEntriesThatReplace":       {msg[api.GetAllReplacementsRequest](), msg[api.ChannelEntry](), true},
	"/api.Registry/GetBundleThatReplaces":              {msg[api.GetReplacementRequest](), msg[api.Bundle](), false},
	"/api.Registry/GetChannelEntriesThatProvide":       {msg[api.GetAllProvidersRequest](), msg[api.ChannelEntry](), true},
	"/api.Registry/GetLatestChannelEntriesThatProvide": {msg[api.GetLatestProvidersRequest](), msg[api.ChannelEntry](), true},
	"/api.Registry/GetDefaultBundleThatProvides":       {msg[api.GetDefaultProviderRequest](), msg[api.Bundle](), false},
	"/api.Registry/ListBundles":                        {msg[api.ListBundlesRequest](), msg[api.Bundle](), true},
	"/api.ExperimentalRegistry/ExperimentalListPackageCustomSchemas": {
		msg[api.ExperimentalListPackageCustomSchemasRequest](), msg[structpb.Struct](), true},
	"/grpc.health.v1.Health/Check": {msg[grpc_health_v1.HealthCheckRequest](), msg[grpc_health_v1.HealthCheckResponse](), false},
	"/grpc.health.v1.Health/List":  {msg[grpc_health_v1.HealthListRequest](), msg[grpc_health_v1.HealthListResponse](), false},
	"/grpc.health.v1.Health/Watch": {msg[grpc_health_v1.HealthCheckRequest](), msg[grpc_health_v1.HealthCheckResponse](), true},
}

func TestConformanceServe(t *testing.T) {
	suite, err := suiteDir()
	if err != nil {
		t.Fatal(err)
	}
	serveDir := filepath.Join(suite, "serve")
	if _, err := os.Stat(serveDir); err != nil {
		t.Skipf("conformance suite not found at %s (it lives in ../shared beside the repository); skipping", serveDir)
	}
	required, err := readRequired()
	if err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(serveDir)
	if err != nil {
		t.Fatal(err)
	}
	passed := map[string]int{}
	total := map[string]int{}
	var failures []string
	for _, e := range ents {
		caseDir := filepath.Join(serveDir, e.Name())
		input, err := serveCaseInput(suite, caseDir)
		if err != nil {
			continue // not a case
		}
		kind := serveKindCalls
		if _, err := os.Stat(filepath.Join(caseDir, "startup.json")); err == nil {
			kind = serveKindStartup
		}
		id := "serve/" + e.Name()
		t.Run(e.Name(), func(t *testing.T) {
			var diff string
			if kind == serveKindStartup {
				diff = checkServeStartup(t, caseDir, input)
			} else {
				diff = checkServeCalls(t, caseDir, input)
			}
			total[kind]++
			if diff == "" {
				passed[kind]++
				return
			}
			failures = append(failures, id)
			if required[kind] {
				t.Errorf("%s: %s", id, diff)
			} else {
				t.Logf("not reproduced (not required): %s: %s", id, firstLine(diff))
			}
		})
	}
	var summary strings.Builder
	for _, k := range []string{serveKindCalls, serveKindStartup} {
		mark := ""
		if required[k] {
			mark = " (required)"
		}
		fmt.Fprintf(&summary, "conformance %-26s %3d of %3d reproduced%s\n", k, passed[k], total[k], mark)
		if required[k] && total[k] == 0 {
			t.Errorf("required run kind %q has no cases in the suite", k)
		}
	}
	t.Log("\n" + summary.String())
	if path := os.Getenv("OPM_CONFORMANCE_SUMMARY"); path != "" {
		mergeSummary(path, summary.String(), failures)
	}
}

// mergeSummary adds the serve lines to the summary TestConformance wrote
// (the counts before its "not reproduced:" list, the failures after).
func mergeSummary(path, lines string, failures []string) {
	old, _ := os.ReadFile(path)
	head, tail, found := strings.Cut(string(old), "\nnot reproduced:\n")
	if !found {
		head, tail = string(old), ""
	}
	tail = strings.TrimSuffix(tail, "\n")
	var list []string
	if tail != "" {
		list = strings.Split(tail, "\n")
	}
	list = append(list, failures...)
	slices.Sort(list)
	out := head + lines + "\nnot reproduced:\n" + strings.Join(list, "\n") + "\n"
	_ = os.WriteFile(path, []byte(out), 0o666)
}

// serveCaseInput returns the catalog directory of a case: its input/, or
// the input/ of the case input.ref names.
func serveCaseInput(suite, caseDir string) (string, error) {
	own := filepath.Join(caseDir, "input")
	if st, err := os.Stat(own); err == nil && st.IsDir() {
		return own, nil
	}
	ref, err := os.ReadFile(filepath.Join(caseDir, "input.ref"))
	if err != nil {
		return "", err
	}
	return filepath.Join(suite, strings.TrimSpace(string(ref)), "input"), nil
}

// servedProcess is a running `opm serve`.
type servedProcess struct {
	cmd    *exec.Cmd
	tmp    string
	addr   chan string
	exited chan struct{}
	mu     sync.Mutex
	log    bytes.Buffer
	err    error
}

var serveAddrRE = regexp.MustCompile(`msg="serving registry".* addr=(\S+)`)

// startServe starts the binary on input, listening on a free loopback port.
func startServe(t *testing.T, input string, extra ...string) *servedProcess {
	t.Helper()
	tmp := t.TempDir()
	args := append([]string{"serve", input, "-p", "127.0.0.1:0", "--pprof-addr", "", "-t", filepath.Join(tmp, "termination-log")}, extra...)
	cmd := exec.Command(opmBin, args...)
	cmd.Env = append(os.Environ(), "TMPDIR="+tmp)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &servedProcess{cmd: cmd, tmp: tmp, addr: make(chan string, 1), exited: make(chan struct{})}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.log.WriteString(line + "\n")
			p.mu.Unlock()
			if m := serveAddrRE.FindStringSubmatch(line); m != nil {
				p.addr <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.err = cmd.Wait()
		close(p.exited)
	}()
	t.Cleanup(func() { p.stop() })
	return p
}

func (p *servedProcess) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.log.String()
}

// stop sends SIGTERM and waits (SIGKILL after 10 s); it returns the exit
// code.
func (p *servedProcess) stop() int {
	select {
	case <-p.exited:
	default:
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.exited:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	return p.cmd.ProcessState.ExitCode()
}

// waitHealthy waits for the "serving registry" line, then for Health/Check
// to answer SERVING. It returns the connection, or nil when the process
// exited first or the time ran out.
func (p *servedProcess) waitHealthy(t *testing.T) *grpc.ClientConn {
	t.Helper()
	deadline := time.After(serveHealthLimit)
	var addr string
	select {
	case addr = <-p.addr:
	case <-p.exited:
		return nil
	case <-deadline:
		return nil
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(256<<20)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	hc := grpc_health_v1.NewHealthClient(conn)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		resp, err := hc.Check(ctx, &grpc_health_v1.HealthCheckRequest{})
		cancel()
		if err == nil && resp.GetStatus() == grpc_health_v1.HealthCheckResponse_SERVING {
			return conn
		}
		select {
		case <-p.exited:
			return nil
		case <-deadline:
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func checkServeStartup(t *testing.T, caseDir, input string) string {
	var want serveStartup
	if err := readJSON(filepath.Join(caseDir, "startup.json"), &want); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, input)
	if conn := p.waitHealthy(t); conn != nil {
		return "the server became healthy, want a refusal to start"
	}
	select {
	case <-p.exited:
	case <-time.After(serveHealthLimit):
		return "the server neither became healthy nor exited"
	}
	code := p.cmd.ProcessState.ExitCode()
	if code == 0 {
		return "the server exited 0, want non-zero"
	}
	if want.ExitCode != 0 && code != want.ExitCode {
		return fmt.Sprintf("exit code %d, want %d", code, want.ExitCode)
	}
	// Our error goes to the termination log (upstream leaves it empty).
	tlog, _ := os.ReadFile(filepath.Join(p.tmp, "termination-log"))
	if len(bytes.TrimSpace(tlog)) == 0 {
		return "the termination log is empty"
	}
	if leftovers, _ := filepath.Glob(filepath.Join(p.tmp, "opm-serve-cache-*")); len(leftovers) > 0 {
		return fmt.Sprintf("temporary cache left behind: %v", leftovers)
	}
	return ""
}

func checkServeCalls(t *testing.T, caseDir, input string) string {
	files, calls := readCalls(t, caseDir)
	p := startServe(t, input)
	conn := p.waitHealthy(t)
	if conn == nil {
		return "not healthy: " + lastLine(p.output())
	}

	diffs := make([]string, len(calls))
	var wg sync.WaitGroup
	next := make(chan int)
	for range serveCallJobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				diffs[i] = replay(conn, calls[i])
			}
		}()
	}
	for i := range calls {
		next <- i
	}
	close(next)
	wg.Wait()

	var bad []string
	for i, d := range diffs {
		if d != "" {
			var req bytes.Buffer
			_ = json.Compact(&req, calls[i].Request)
			bad = append(bad, fmt.Sprintf("%s %s %s: %s", filepath.Base(files[i]), calls[i].Method, req.String(), d))
		}
	}
	if code := p.stop(); code != 0 {
		bad = append(bad, fmt.Sprintf("exit code %d after SIGTERM, want 0; log: %s", code, lastLine(p.output())))
	}
	if leftovers, _ := filepath.Glob(filepath.Join(p.tmp, "opm-serve-cache-*")); len(leftovers) > 0 {
		bad = append(bad, fmt.Sprintf("temporary cache left behind: %v", leftovers))
	}
	if len(bad) == 0 {
		return ""
	}
	if len(bad) > 10 {
		bad = append(bad[:10], fmt.Sprintf("... and %d more", len(bad)-10))
	}
	return fmt.Sprintf("%d of %d calls differ:\n%s", len(bad), len(calls), strings.Join(bad, "\n"))
}

// replay makes one call and returns "" when it matches the recording.
func replay(conn *grpc.ClientConn, c serveCall) string {
	method := "/" + c.Method
	desc, ok := serveRPCs[method]
	if !ok {
		return "unknown method"
	}
	req := desc.req()
	if len(c.Request) > 0 {
		if err := protojson.Unmarshal(c.Request, req); err != nil {
			return fmt.Sprintf("bad recorded request: %v", err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, h := range c.Headers {
		k, v, _ := strings.Cut(h, ":")
		ctx = metadata.AppendToOutgoingContext(ctx, strings.TrimSpace(k), strings.TrimSpace(v))
	}
	var got []proto.Message
	var err error
	if desc.stream {
		var s grpc.ClientStream
		s, err = conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, method)
		if err == nil {
			err = s.SendMsg(req)
		}
		if err == nil {
			err = s.CloseSend()
		}
		for err == nil {
			m := desc.resp()
			if err = s.RecvMsg(m); err == nil {
				got = append(got, m)
			}
		}
		if errors.Is(err, io.EOF) {
			err = nil
		}
	} else {
		m := desc.resp()
		if err = conn.Invoke(ctx, method, req, m); err == nil {
			got = append(got, m)
		}
	}
	st := status.Convert(err)
	if code := st.Code().String(); code != c.Code {
		return fmt.Sprintf("code %s (%q), want %s (%q)", code, st.Message(), c.Code, c.Message)
	}
	if st.Message() != c.Message {
		return fmt.Sprintf("message %q, want %q", st.Message(), c.Message)
	}
	gotJSON := make([]any, len(got))
	for i, m := range got {
		b, err := protojson.Marshal(m)
		if err != nil {
			return err.Error()
		}
		if err := json.Unmarshal(b, &gotJSON[i]); err != nil {
			return err.Error()
		}
	}
	alts := c.AnyOf
	if len(alts) == 0 {
		alts = [][]json.RawMessage{c.Response}
	}
	for _, alt := range alts {
		want := make([]any, len(alt))
		for i, r := range alt {
			if err := json.Unmarshal(r, &want[i]); err != nil {
				return fmt.Sprintf("bad recorded response: %v", err)
			}
		}
		if sameMessages(want, gotJSON, c.Ordered) {
			return ""
		}
	}
	return describeDiff(alts[0], gotJSON, c.Ordered)
}

func sameMessages(want, got []any, ordered bool) bool {
	if len(want) != len(got) {
		return false
	}
	if ordered {
		return reflect.DeepEqual(want, got)
	}
	key := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	w := make([]string, len(want))
	g := make([]string, len(got))
	for i := range want {
		w[i], g[i] = key(want[i]), key(got[i])
	}
	slices.Sort(w)
	slices.Sort(g)
	return slices.Equal(w, g)
}

func describeDiff(wantRaw []json.RawMessage, got []any, ordered bool) string {
	if len(wantRaw) != len(got) {
		return fmt.Sprintf("%d messages, want %d", len(got), len(wantRaw))
	}
	if !ordered {
		return "messages differ (compared as a multiset)"
	}
	for i := range got {
		var w any
		_ = json.Unmarshal(wantRaw[i], &w)
		if reflect.DeepEqual(w, got[i]) {
			continue
		}
		wm, ok1 := w.(map[string]any)
		gm, ok2 := got[i].(map[string]any)
		if ok1 && ok2 {
			var keys []string
			for k := range wm {
				if !reflect.DeepEqual(wm[k], gm[k]) {
					keys = append(keys, k)
				}
			}
			for k := range gm {
				if _, ok := wm[k]; !ok {
					keys = append(keys, k)
				}
			}
			slices.Sort(keys)
			detail := ""
			if len(keys) > 0 {
				gb, _ := json.Marshal(gm[keys[0]])
				wb, _ := json.Marshal(wm[keys[0]])
				detail = fmt.Sprintf(": %s is %.300s, want %.300s", keys[0], gb, wb)
			}
			return fmt.Sprintf("message %d differs in %s%s", i, strings.Join(keys, ", "), detail)
		}
		return fmt.Sprintf("message %d differs", i)
	}
	return "messages differ"
}

func readJSON(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(data, v)
}

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return s[i+1:]
	}
	return s
}

// TestConformanceServeHTTP checks catalogd's HTTP API against the one
// recorded answer the suite has: catalogd-test-catalog's
// input/expected_all.json is catalogd's /api/v1/all for its catalog.
func TestConformanceServeHTTP(t *testing.T) {
	suite, err := suiteDir()
	if err != nil {
		t.Fatal(err)
	}
	input := filepath.Join(suite, "catalog", "catalogd-test-catalog", "input")
	want, err := os.ReadFile(filepath.Join(input, "expected_all.json"))
	if err != nil {
		t.Skipf("conformance suite not found at %s (it lives in ../shared beside the repository); skipping", suite)
	}
	p := startServe(t, input, "--http-addr", "127.0.0.1:0")
	if conn := p.waitHealthy(t); conn == nil {
		t.Fatalf("not healthy: %s", lastLine(p.output()))
	}
	m := regexp.MustCompile(`msg="serving registry".* http=(\S+)`).FindStringSubmatch(p.output())
	if m == nil {
		t.Fatalf("no HTTP address in the log: %s", p.output())
	}
	resp, err := http.Get("http://" + m[1] + "/api/v1/all")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 || !bytes.Equal(got, want) {
		t.Errorf("/api/v1/all: %d, differs from expected_all.json at %s", resp.StatusCode, firstDiff(got, want))
	}
	if code := p.stop(); code != 0 {
		t.Errorf("exit code %d after SIGTERM", code)
	}
}
