package serve

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/blang/semver/v4"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	// Registers the gzip compressor: clients may send gzip-compressed
	// requests (grpc-health-probe -gzip does), as upstream's server
	// accepts them.
	_ "google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/opmkit/opm/pkg/api"
)

// The gRPC services, answering as upstream's registry server does (see
// docs/serve.md): lookup failures are plain errors, i.e. status Unknown,
// with upstream's messages; streams send nothing before an error.

// NewGRPCServer returns a gRPC server offering api.Registry,
// api.ExperimentalRegistry, grpc.health.v1.Health (always SERVING) and
// server reflection over x. log, when not nil, receives one debug line per
// call.
//
// The server applies Limits (DefaultLimits, or those of a WithLimits
// option): streams per connection, streaming calls at once, and clients
// that stop reading (call Drain before stopping it). Errors quote at most
// 256 bytes of a request's name.
func NewGRPCServer(x *Index, log *slog.Logger, opts ...grpc.ServerOption) *grpc.Server {
	opts, g := limitOptions(opts)
	if log != nil {
		opts = append(opts,
			grpc.ChainUnaryInterceptor(func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
				start := time.Now()
				resp, err := h(ctx, req)
				logCall(ctx, log, info.FullMethod, start, err)
				return resp, err
			}),
			grpc.ChainStreamInterceptor(func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
				start := time.Now()
				err := h(srv, ss)
				logCall(ss.Context(), log, info.FullMethod, start, err)
				return err
			}),
		)
	}
	s := grpc.NewServer(opts...)
	guards.Store(s, g)
	api.RegisterRegistryServer(s, &RegistryServer{Index: x})
	api.RegisterExperimentalRegistryServer(s, &ExperimentalServer{Index: x})
	grpc_health_v1.RegisterHealthServer(s, HealthServer{})
	reflection.Register(s)
	return s
}

func logCall(ctx context.Context, log *slog.Logger, method string, start time.Time, err error) {
	if !log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	md, _ := metadata.FromIncomingContext(ctx)
	log.Debug("finished call", "grpc.method", method, "grpc.code", status.Code(err).String(),
		"grpc.time_ms", float64(time.Since(start).Microseconds())/1000, "metadata", md)
}

// HealthServer answers Check with SERVING for any service name, as
// upstream does; Watch and List are not implemented.
type HealthServer struct {
	grpc_health_v1.UnimplementedHealthServer
}

// Check implements grpc.health.v1.Health.
func (HealthServer) Check(context.Context, *grpc_health_v1.HealthCheckRequest) (*grpc_health_v1.HealthCheckResponse, error) {
	return &grpc_health_v1.HealthCheckResponse{Status: grpc_health_v1.HealthCheckResponse_SERVING}, nil
}

// RegistryServer implements api.Registry over an Index.
type RegistryServer struct {
	api.UnimplementedRegistryServer
	Index *Index
}

var _ api.RegistryServer = (*RegistryServer)(nil)

// ListPackages implements api.Registry.
func (s *RegistryServer) ListPackages(_ *api.ListPackageRequest, stream grpc.ServerStreamingServer[api.PackageName]) error {
	for _, p := range s.Index.packages {
		if err := stream.Send(&api.PackageName{Name: p.Name}); err != nil {
			return err
		}
	}
	return nil
}

// GetPackage implements api.Registry.
func (s *RegistryServer) GetPackage(_ context.Context, req *api.GetPackageRequest) (*api.Package, error) {
	p, ok := s.Index.Package(req.GetName())
	if !ok {
		return nil, fmt.Errorf("package %q not found", req.GetName())
	}
	out := &api.Package{Name: p.Name, DefaultChannelName: p.DefaultChannel, Deprecation: apiDeprecation(p.Deprecation)}
	for i := range p.Channels {
		c := &p.Channels[i]
		ch := &api.Channel{Name: c.Name, Deprecation: apiDeprecation(c.Deprecation)}
		if c.Head >= 0 {
			ch.CsvName = s.Index.BundleOf(c.Head).Name
		}
		out.Channels = append(out.Channels, ch)
	}
	return out, nil
}

func apiDeprecation(d Deprecation) *api.Deprecation {
	if !d.Set {
		return nil
	}
	return &api.Deprecation{Message: d.Message}
}

// lookupChannel finds a package's channel with GetBundle's errors.
func (s *RegistryServer) lookupChannel(pkg, ch string) (*Channel, error) {
	p, ok := s.Index.Package(pkg)
	if !ok {
		return nil, fmt.Errorf("package %q not found", pkg)
	}
	_, c, ok := p.Channel(ch)
	if !ok {
		return nil, fmt.Errorf("package %q, channel %q not found", pkg, ch)
	}
	return c, nil
}

// GetBundle implements api.Registry.
func (s *RegistryServer) GetBundle(_ context.Context, req *api.GetBundleRequest) (*api.Bundle, error) {
	c, err := s.lookupChannel(req.GetPkgName(), req.GetChannelName())
	if err != nil {
		return nil, err
	}
	r, ok := s.Index.RecordIn(c, req.GetCsvName())
	if !ok {
		return nil, fmt.Errorf("package %q, channel %q, bundle %q not found", req.GetPkgName(), req.GetChannelName(), req.GetCsvName())
	}
	return s.Index.APIBundle(r, true, true)
}

// GetBundleForChannel implements api.Registry.
func (s *RegistryServer) GetBundleForChannel(_ context.Context, req *api.GetBundleInChannelRequest) (*api.Bundle, error) {
	c, err := s.lookupChannel(req.GetPkgName(), req.GetChannelName())
	if err != nil {
		return nil, err
	}
	if c.Head < 0 {
		return nil, fmt.Errorf("package %q, channel %q has no head", req.GetPkgName(), req.GetChannelName())
	}
	return s.Index.APIBundle(c.Head, true, true)
}

// GetChannelEntriesThatReplace implements api.Registry.
func (s *RegistryServer) GetChannelEntriesThatReplace(req *api.GetAllReplacementsRequest, stream grpc.ServerStreamingServer[api.ChannelEntry]) error {
	name := req.GetCsvName()
	var out []*api.ChannelEntry
	x := s.Index
	for r := range x.records {
		rec := &x.records[r]
		entry := func() *api.ChannelEntry {
			return &api.ChannelEntry{
				PackageName: x.packages[rec.Package].Name,
				ChannelName: x.packages[rec.Package].Channels[rec.Channel].Name,
				BundleName:  x.bundles[rec.Bundle].Name,
				Replaces:    rec.Replaces,
			}
		}
		if rec.Replaces == name {
			out = append(out, entry())
		}
		for _, skip := range rec.Skips {
			if skip == name && skip != rec.Replaces {
				out = append(out, entry())
			}
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("no channel entries found that replace %s", name)
	}
	return sendAll(stream, out)
}

// GetBundleThatReplaces implements api.Registry. When several bundles of
// the channel replace or skip the name (upstream picks one by map
// iteration), the one with the highest version is answered, the first by
// bundle name among equals.
func (s *RegistryServer) GetBundleThatReplaces(_ context.Context, req *api.GetReplacementRequest) (*api.Bundle, error) {
	p, ok := s.Index.Package(req.GetPkgName())
	if !ok {
		return nil, fmt.Errorf("package %s not found", req.GetPkgName())
	}
	_, c, ok := p.Channel(req.GetChannelName())
	if !ok {
		return nil, fmt.Errorf("package %q, channel %q not found", req.GetPkgName(), req.GetChannelName())
	}
	name := req.GetCsvName()
	best, bestV := int32(-1), semver.Version{}
	for _, r := range c.Records {
		rec := s.Index.Record(r)
		if rec.Replaces != name && !slices.Contains(rec.Skips, name) {
			continue
		}
		// The catalog validated, so versions parse; one that did not
		// would rank lowest.
		v, _ := semver.Parse(s.Index.BundleOf(r).Version)
		if best < 0 || v.GT(bestV) {
			best, bestV = r, v
		}
	}
	if best < 0 {
		return nil, fmt.Errorf("no entry found for package %q, channel %q", req.GetPkgName(), req.GetChannelName())
	}
	return s.Index.APIBundle(best, true, true)
}

func gvkOf(g interface {
	GetGroup() string
	GetVersion() string
	GetKind() string
}) GVK {
	return GVK{Group: g.GetGroup(), Version: g.GetVersion(), Kind: g.GetKind()}
}

func errNoProvider(g GVK) error {
	return fmt.Errorf("no channel entries found that provide group:%q version:%q kind:%q", g.Group, g.Version, g.Kind)
}

// providerEntries lists the entries of the records providing g: each
// record's own entry, plus one per skipped name different from its
// replaces (only heads and only skips within the channel when latest).
func (x *Index) providerEntries(g GVK, latest bool) []*api.ChannelEntry {
	var out []*api.ChannelEntry
	for _, r := range x.providers[g] {
		if latest && !x.IsHead(r) {
			continue
		}
		rec := &x.records[r]
		p := &x.packages[rec.Package]
		c := &p.Channels[rec.Channel]
		name := x.bundles[rec.Bundle].Name
		out = append(out, &api.ChannelEntry{PackageName: p.Name, ChannelName: c.Name, BundleName: name, Replaces: rec.Replaces})
		for _, skip := range rec.Skips {
			if skip == rec.Replaces {
				continue
			}
			if latest {
				if _, ok := x.RecordIn(c, skip); !ok {
					continue
				}
			}
			out = append(out, &api.ChannelEntry{PackageName: p.Name, ChannelName: c.Name, BundleName: name, Replaces: skip})
		}
	}
	return out
}

// GetChannelEntriesThatProvide implements api.Registry.
func (s *RegistryServer) GetChannelEntriesThatProvide(req *api.GetAllProvidersRequest, stream grpc.ServerStreamingServer[api.ChannelEntry]) error {
	g := gvkOf(req)
	out := s.Index.providerEntries(g, false)
	if len(out) == 0 {
		return errNoProvider(g)
	}
	return sendAll(stream, out)
}

// GetLatestChannelEntriesThatProvide implements api.Registry.
func (s *RegistryServer) GetLatestChannelEntriesThatProvide(req *api.GetLatestProvidersRequest, stream grpc.ServerStreamingServer[api.ChannelEntry]) error {
	g := gvkOf(req)
	out := s.Index.providerEntries(g, true)
	if len(out) == 0 {
		return errNoProvider(g)
	}
	return sendAll(stream, out)
}

// GetDefaultBundleThatProvides implements api.Registry.
func (s *RegistryServer) GetDefaultBundleThatProvides(_ context.Context, req *api.GetDefaultProviderRequest) (*api.Bundle, error) {
	g := gvkOf(req)
	x := s.Index
	found := false
	// Records are grouped by channel, so scan the providers for the first
	// package (by name) whose default channel's head provides g.
	best := int32(-1)
	for _, r := range x.providers[g] {
		if !x.IsHead(r) {
			continue
		}
		found = true
		rec := &x.records[r]
		p := &x.packages[rec.Package]
		if p.Channels[rec.Channel].Name != p.DefaultChannel {
			continue
		}
		if best < 0 || p.Name < x.packages[x.records[best].Package].Name {
			best = r
		}
	}
	if !found {
		return nil, errNoProvider(g)
	}
	if best < 0 {
		return nil, fmt.Errorf("no entry found that provides group:%q version:%q kind:%q", g.Group, g.Version, g.Kind)
	}
	return x.APIBundle(best, true, true)
}

// ListBundles implements api.Registry.
func (s *RegistryServer) ListBundles(_ *api.ListBundlesRequest, stream grpc.ServerStreamingServer[api.Bundle]) error {
	x := s.Index
	for r := range x.records {
		if err := stream.Context().Err(); err != nil {
			return status.FromContextError(err).Err()
		}
		b := &x.bundles[x.records[r].Bundle]
		out, err := x.APIBundle(int32(r), false, b.Image == "")
		if err != nil {
			return err
		}
		if err := stream.Send(out); err != nil {
			return err
		}
	}
	return nil
}

func sendAll[T any](stream grpc.ServerStreamingServer[T], msgs []*T) error {
	for _, m := range msgs {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	return nil
}

// APIBundle returns record r as an api.Bundle. trim blanks replaces and
// skips (GetBundle and friends); objects includes csvJson and object. The
// result shares read-only parts with other calls' results (the bundle's
// APIs, dependencies, properties and deprecation are built once): marshal
// it, never modify it.
func (x *Index) APIBundle(r int32, trim, objects bool) (*api.Bundle, error) {
	rec := &x.records[r]
	t := x.template(rec.Bundle)
	out := &api.Bundle{
		CsvName:      t.CsvName,
		PackageName:  t.PackageName,
		ChannelName:  x.packages[rec.Package].Channels[rec.Channel].Name,
		BundlePath:   t.BundlePath,
		ProvidedApis: t.ProvidedApis,
		RequiredApis: t.RequiredApis,
		Version:      t.Version,
		SkipRange:    rec.SkipRange,
		Dependencies: t.Dependencies,
		Properties:   t.Properties,
		Deprecation:  t.Deprecation,
	}
	if !trim {
		out.Replaces = rec.Replaces
		out.Skips = rec.Skips
	}
	if objects {
		b := &x.bundles[rec.Bundle]
		objs, csv, err := x.Objects(b)
		if err != nil {
			return nil, status.Errorf(codes.Internal, "package %q, bundle %q: %v", b.Package, b.Name, err)
		}
		out.Object, out.CsvJson = objs, csv
	}
	return out, nil
}

// template returns the channel-independent part of bundle i as an
// api.Bundle, built on first use.
func (x *Index) template(i int32) *api.Bundle {
	if t := x.templates[i].Load(); t != nil {
		return t
	}
	b := &x.bundles[i]
	t := &api.Bundle{
		CsvName:     b.Name,
		PackageName: b.Package,
		BundlePath:  b.Image,
		Version:     b.Version,
		Deprecation: apiDeprecation(b.Deprecation),
	}
	gvks := make([]api.GroupVersionKind, len(b.Provided)+len(b.Required))
	for k, g := range b.Provided {
		gvks[k] = api.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind}
		t.ProvidedApis = append(t.ProvidedApis, &gvks[k])
	}
	for k, g := range b.Required {
		n := len(b.Provided) + k
		gvks[n] = api.GroupVersionKind{Group: g.Group, Version: g.Version, Kind: g.Kind}
		t.RequiredApis = append(t.RequiredApis, &gvks[n])
	}
	deps := make([]api.Dependency, len(b.Deps))
	for k, d := range b.Deps {
		deps[k] = api.Dependency{Type: d.Type, Value: d.Value}
		t.Dependencies = append(t.Dependencies, &deps[k])
	}
	props := make([]api.Property, len(b.Properties))
	for k, kv := range b.Properties {
		props[k] = api.Property{Type: kv.Type, Value: kv.Value}
		t.Properties = append(t.Properties, &props[k])
	}
	if x.templates[i].CompareAndSwap(nil, t) {
		return t
	}
	return x.templates[i].Load()
}

// ExperimentalServer implements api.ExperimentalRegistry.
type ExperimentalServer struct {
	api.UnimplementedExperimentalRegistryServer
	Index *Index
}

// AcknowledgeHeader is the request metadata the experimental service
// requires (its first value must be exactly "true").
const AcknowledgeHeader = "x-acknowledge-experimental"

// ExperimentalListPackageCustomSchemas implements
// api.ExperimentalRegistry.
func (s *ExperimentalServer) ExperimentalListPackageCustomSchemas(req *api.ExperimentalListPackageCustomSchemasRequest, stream grpc.ServerStreamingServer[structpb.Struct]) error {
	md, _ := metadata.FromIncomingContext(stream.Context())
	if v := md.Get(AcknowledgeHeader); len(v) == 0 || v[0] != "true" {
		return nil
	}
	schema, pkg := req.GetSchema(), req.GetPackageName()
	if schema == "" {
		return status.Error(codes.InvalidArgument, "schema is required")
	}
	if !customNameRE.MatchString(schema) {
		return status.Errorf(codes.InvalidArgument, "invalid custom schema query: invalid schema %q: must match %s", schema, CustomNamePattern)
	}
	if pkg != "" && !customNameRE.MatchString(pkg) {
		return status.Errorf(codes.InvalidArgument, "invalid custom schema query: invalid packageName %q: must match %s", pkg, CustomNamePattern)
	}
	blobs, err := s.Index.CustomBlobs(schema, pkg)
	if err != nil {
		return status.Error(codes.Internal, err.Error())
	}
	msgs := make([]*structpb.Struct, 0, len(blobs))
	for _, b := range blobs {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return status.Errorf(codes.Internal, "decoding a %s blob: %v", schema, err)
		}
		st, err := structpb.NewStruct(m)
		if err != nil {
			return status.Errorf(codes.Internal, "converting a %s blob: %v", schema, err)
		}
		msgs = append(msgs, st)
	}
	return sendAll(stream, msgs)
}
