// Package api is the gRPC registry API that `opm serve` offers and OLM's
// catalog operator calls: the api.Registry and api.ExperimentalRegistry
// services of registry.proto, with the same package, service, message and
// field names and numbers as upstream operator-registry's, so existing
// clients (OLM, grpcurl, grpc_health_probe) work unchanged.
//
// registry.pb.go and registry_grpc.pb.go are generated; `go generate
// ./pkg/api` reproduces them (it needs protoc, protoc-gen-go and
// protoc-gen-go-grpc on PATH; see docs/serve.md).
package api

//go:generate protoc -I . --go_out=. --go_opt=paths=source_relative --go-grpc_out=. --go-grpc_opt=paths=source_relative registry.proto
