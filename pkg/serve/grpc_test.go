package serve

import (
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	rpb "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/opmkit/opm/pkg/api"
)

// startGRPC serves x on a loopback port and returns a client connection.
func startGRPC(t testing.TB, x *Index) *grpc.ClientConn {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewGRPCServer(x, nil)
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient(lis.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

func recvAll[T any](t *testing.T, s interface{ Recv() (*T, error) }) ([]*T, error) {
	t.Helper()
	var out []*T
	for {
		m, err := s.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, m)
	}
}

func wantStatus(t *testing.T, err error, code codes.Code, msg string) {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code || st.Message() != msg {
		t.Errorf("status %v %q, want %v %q", st.Code(), st.Message(), code, msg)
	}
}

func entries(es []*api.ChannelEntry) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.PackageName+"/"+e.ChannelName+"/"+e.BundleName+"<"+e.Replaces)
	}
	slices.Sort(out)
	return out
}

func TestRegistryRPCs(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := api.NewRegistryClient(startGRPC(t, buildTest(t, testCatalog(), false)))

	s, err := c.ListPackages(ctx, &api.ListPackageRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names, err := recvAll[api.PackageName](t, s)
	if err != nil || len(names) != 2 {
		t.Fatalf("ListPackages: %v %v", names, err)
	}

	pkg, err := c.GetPackage(ctx, &api.GetPackageRequest{Name: "foo"})
	if err != nil {
		t.Fatal(err)
	}
	want := &api.Package{Name: "foo", DefaultChannelName: "stable", Channels: []*api.Channel{
		{Name: "fast", CsvName: "foo.v1.2.0", Deprecation: &api.Deprecation{Message: "fast is closed"}},
		{Name: "stable", CsvName: "foo.v1.1.0"},
	}}
	if !proto.Equal(pkg, want) {
		t.Errorf("GetPackage\n got %v\nwant %v", pkg, want)
	}
	_, err = c.GetPackage(ctx, &api.GetPackageRequest{})
	wantStatus(t, err, codes.Unknown, `package "" not found`)

	b, err := c.GetBundle(ctx, &api.GetBundleRequest{PkgName: "foo", ChannelName: "stable", CsvName: "foo.v1.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	if b.Replaces != "" || b.Skips != nil || b.SkipRange != ">=0.9.0 <1.1.0" || b.ChannelName != "stable" || b.Version != "1.1.0" ||
		!strings.HasPrefix(b.CsvJson, `{"kind":"ClusterServiceVersion"`) || len(b.Object) != 1 || len(b.ProvidedApis) != 1 || len(b.RequiredApis) != 1 || len(b.Dependencies) != 2 || len(b.Properties) != 5 {
		t.Errorf("GetBundle: %v", b)
	}
	_, err = c.GetBundle(ctx, &api.GetBundleRequest{PkgName: "nope"})
	wantStatus(t, err, codes.Unknown, `package "nope" not found`)
	_, err = c.GetBundle(ctx, &api.GetBundleRequest{PkgName: "foo", ChannelName: "nope"})
	wantStatus(t, err, codes.Unknown, `package "foo", channel "nope" not found`)
	_, err = c.GetBundle(ctx, &api.GetBundleRequest{PkgName: "foo", ChannelName: "fast", CsvName: "foo.v1.0.0"})
	wantStatus(t, err, codes.Unknown, `package "foo", channel "fast", bundle "foo.v1.0.0" not found`)

	//lint:ignore SA1019 the server implements the deprecated RPC; this tests it
	b, err = c.GetBundleForChannel(ctx, &api.GetBundleInChannelRequest{PkgName: "foo", ChannelName: "fast"})
	if err != nil || b.CsvName != "foo.v1.2.0" || b.Replaces != "" {
		t.Errorf("GetBundleForChannel: %v %v", b, err)
	}

	rs, err := c.GetChannelEntriesThatReplace(ctx, &api.GetAllReplacementsRequest{CsvName: "foo.v0.9.0"})
	if err != nil {
		t.Fatal(err)
	}
	es, err := recvAll[api.ChannelEntry](t, rs)
	if got, want := entries(es), []string{"foo/stable/foo.v1.1.0<foo.v1.0.0", "foo/stable/foo.v1.1.0<foo.v1.0.0"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("GetChannelEntriesThatReplace(foo.v0.9.0): %v %v", got, err)
	}
	rs, _ = c.GetChannelEntriesThatReplace(ctx, &api.GetAllReplacementsRequest{})
	es, _ = recvAll[api.ChannelEntry](t, rs)
	if got, want := entries(es), []string{"bar/alpha/bar.v1.0.0<", "foo/fast/foo.v1.1.0<", "foo/stable/foo.v1.0.0<"}; !slices.Equal(got, want) {
		t.Errorf("GetChannelEntriesThatReplace(\"\"): %v", got)
	}
	rs, _ = c.GetChannelEntriesThatReplace(ctx, &api.GetAllReplacementsRequest{CsvName: "nope"})
	_, err = recvAll[api.ChannelEntry](t, rs)
	wantStatus(t, err, codes.Unknown, "no channel entries found that replace nope")

	b, err = c.GetBundleThatReplaces(ctx, &api.GetReplacementRequest{CsvName: "foo.v1.0.0", PkgName: "foo", ChannelName: "stable"})
	if err != nil || b.CsvName != "foo.v1.1.0" || b.Replaces != "" {
		t.Errorf("GetBundleThatReplaces: %v %v", b, err)
	}
	_, err = c.GetBundleThatReplaces(ctx, &api.GetReplacementRequest{CsvName: "x", PkgName: "nope"})
	wantStatus(t, err, codes.Unknown, "package nope not found")
	_, err = c.GetBundleThatReplaces(ctx, &api.GetReplacementRequest{CsvName: "x", PkgName: "foo", ChannelName: "stable"})
	wantStatus(t, err, codes.Unknown, `no entry found for package "foo", channel "stable"`)

	fooV1 := &api.GetAllProvidersRequest{Group: "foo.io", Version: "v1", Kind: "Foo", Plural: "ignored"}
	ps, err := c.GetChannelEntriesThatProvide(ctx, fooV1)
	if err != nil {
		t.Fatal(err)
	}
	es, _ = recvAll[api.ChannelEntry](t, ps)
	if got, want := entries(es), []string{"bar/alpha/bar.v1.0.0<", "foo/fast/foo.v1.1.0<", "foo/stable/foo.v1.0.0<", "foo/stable/foo.v1.1.0<foo.v0.9.0", "foo/stable/foo.v1.1.0<foo.v0.9.0", "foo/stable/foo.v1.1.0<foo.v1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("GetChannelEntriesThatProvide: %v", got)
	}
	ls, _ := c.GetLatestChannelEntriesThatProvide(ctx, &api.GetLatestProvidersRequest{Group: "foo.io", Version: "v1", Kind: "Foo"})
	es, _ = recvAll[api.ChannelEntry](t, ls)
	if got, want := entries(es), []string{"bar/alpha/bar.v1.0.0<", "foo/stable/foo.v1.1.0<foo.v1.0.0"}; !slices.Equal(got, want) {
		t.Errorf("GetLatestChannelEntriesThatProvide: %v", got)
	}
	ls, _ = c.GetLatestChannelEntriesThatProvide(ctx, &api.GetLatestProvidersRequest{Group: "foo.io", Version: "v1", Kind: "foo"})
	_, err = recvAll[api.ChannelEntry](t, ls)
	wantStatus(t, err, codes.Unknown, `no channel entries found that provide group:"foo.io" version:"v1" kind:"foo"`)

	b, err = c.GetDefaultBundleThatProvides(ctx, &api.GetDefaultProviderRequest{Group: "foo.io", Version: "v1", Kind: "Foo"})
	if err != nil || b.CsvName != "bar.v1.0.0" {
		t.Errorf("GetDefaultBundleThatProvides: %v %v", b, err)
	}
	_, err = c.GetDefaultBundleThatProvides(ctx, &api.GetDefaultProviderRequest{Group: "foo.io", Version: "v2", Kind: "Foo"})
	wantStatus(t, err, codes.Unknown, `no entry found that provides group:"foo.io" version:"v2" kind:"Foo"`)
	_, err = c.GetDefaultBundleThatProvides(ctx, &api.GetDefaultProviderRequest{})
	wantStatus(t, err, codes.Unknown, `no channel entries found that provide group:"" version:"" kind:""`)

	lb, err := c.ListBundles(ctx, &api.ListBundlesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	bundles, err := recvAll[api.Bundle](t, lb)
	if err != nil || len(bundles) != 5 {
		t.Fatalf("ListBundles: %d %v", len(bundles), err)
	}
	for _, b := range bundles {
		switch {
		case b.BundlePath == "" && (b.CsvJson == "" || len(b.Object) != 2 || b.Deprecation.GetMessage() != "old"):
			t.Errorf("ListBundles: a bundle without image keeps its objects and deprecation: %v", b)
		case b.BundlePath != "" && (b.CsvJson != "" || b.Object != nil):
			t.Errorf("ListBundles: objects of %s not cleared", b.CsvName)
		}
		if b.ChannelName == "stable" && b.CsvName == "foo.v1.1.0" && (b.Replaces != "foo.v1.0.0" || len(b.Skips) != 2) {
			t.Errorf("ListBundles does not trim: %v", b)
		}
	}
}

func TestExperimentalRPC(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := api.NewExperimentalRegistryClient(startGRPC(t, buildTest(t, testCatalog(), false)))
	list := func(ctx context.Context, schema, pkg string) (int, error) {
		s, err := c.ExperimentalListPackageCustomSchemas(ctx, &api.ExperimentalListPackageCustomSchemasRequest{Schema: schema, PackageName: pkg})
		if err != nil {
			return 0, err
		}
		n := 0
		for {
			m, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			if schema == "example.custom" && pkg == "foo" && m.Fields["data"].GetStructValue().Fields["answer"].GetNumberValue() != 42 {
				t.Errorf("blob %v", m)
			}
			n++
		}
	}
	if n, err := list(ctx, "", ""); n != 0 || err != nil {
		t.Errorf("without the header: %d %v", n, err)
	}
	ack := metadata.AppendToOutgoingContext(ctx, AcknowledgeHeader, "TRUE")
	if n, err := list(ack, "example.custom", "foo"); n != 0 || err != nil {
		t.Errorf("with TRUE: %d %v", n, err)
	}
	ack = metadata.AppendToOutgoingContext(ctx, AcknowledgeHeader, "true")
	_, err := list(ack, "", "foo")
	wantStatus(t, err, codes.InvalidArgument, "schema is required")
	_, err = list(ack, "a/b", "")
	wantStatus(t, err, codes.InvalidArgument, `invalid custom schema query: invalid schema "a/b": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)
	_, err = list(ack, "x", "../foo")
	wantStatus(t, err, codes.InvalidArgument, `invalid custom schema query: invalid packageName "../foo": must match ^[a-zA-Z0-9][a-zA-Z0-9._-]*$`)
	for _, tc := range []struct {
		schema, pkg string
		want        int
	}{{"example.custom", "foo", 1}, {"example.custom", "", 1}, {"example.custom", "bar", 0}, {"olm.bundle", "foo", 0}} {
		if n, err := list(ack, tc.schema, tc.pkg); n != tc.want || err != nil {
			t.Errorf("%s/%s: %d blobs (%v), want %d", tc.schema, tc.pkg, n, err, tc.want)
		}
	}
}

func TestHealthAndReflection(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn := startGRPC(t, buildTest(t, testCatalog(), false))

	// What OLM's probes (grpc_health_probe) ask.
	h := grpc_health_v1.NewHealthClient(conn)
	for _, svc := range []string{"", "api.Registry", "no-such-service"} {
		resp, err := h.Check(ctx, &grpc_health_v1.HealthCheckRequest{Service: svc})
		if err != nil || resp.Status != grpc_health_v1.HealthCheckResponse_SERVING {
			t.Errorf("Check(%q): %v %v", svc, resp, err)
		}
	}
	_, err := h.List(ctx, &grpc_health_v1.HealthListRequest{})
	wantStatus(t, err, codes.Unimplemented, "method List not implemented")
	w, err := h.Watch(ctx, &grpc_health_v1.HealthCheckRequest{})
	if err == nil {
		_, err = w.Recv()
	}
	wantStatus(t, err, codes.Unimplemented, "method Watch not implemented")

	r, err := rpb.NewServerReflectionClient(conn).ServerReflectionInfo(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_ListServices{}}); err != nil {
		t.Fatal(err)
	}
	resp, err := r.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var svcs []string
	for _, s := range resp.GetListServicesResponse().GetService() {
		svcs = append(svcs, s.Name)
	}
	slices.Sort(svcs)
	if want := []string{"api.ExperimentalRegistry", "api.Registry", "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection", "grpc.reflection.v1alpha.ServerReflection"}; !slices.Equal(svcs, want) {
		t.Errorf("services %v, want %v", svcs, want)
	}
	if err := r.Send(&rpb.ServerReflectionRequest{MessageRequest: &rpb.ServerReflectionRequest_FileContainingSymbol{FileContainingSymbol: "api.Registry"}}); err != nil {
		t.Fatal(err)
	}
	resp, err = r.Recv()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, raw := range resp.GetFileDescriptorResponse().GetFileDescriptorProto() {
		var fd descriptorpb.FileDescriptorProto
		if err := proto.Unmarshal(raw, &fd); err != nil {
			t.Fatal(err)
		}
		names = append(names, fd.GetName()+":"+fd.GetPackage())
	}
	if !slices.Contains(names, "registry.proto:api") || !slices.Contains(names, "google/protobuf/struct.proto:google.protobuf") {
		t.Errorf("reflection files %v", names)
	}
}

// TestGzipRequests: requests compressed with gzip (grpc-health-probe
// -gzip, or a client with grpc.UseCompressor) are accepted, as upstream's
// server accepts them, and answered.
func TestGzipRequests(t *testing.T) {
	conn := startGRPC(t, buildTest(t, testCatalog(), false))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := grpc_health_v1.NewHealthClient(conn).Check(ctx, &grpc_health_v1.HealthCheckRequest{}, grpc.UseCompressor(gzip.Name))
	if err != nil || resp.Status != grpc_health_v1.HealthCheckResponse_SERVING {
		t.Fatalf("gzip health check: %v, %v", resp, err)
	}
	p, err := api.NewRegistryClient(conn).GetPackage(ctx, &api.GetPackageRequest{Name: "foo"}, grpc.UseCompressor(gzip.Name))
	if err != nil || p.Name != "foo" {
		t.Fatalf("gzip GetPackage: %v, %v", p, err)
	}
}
