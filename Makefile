# opm: build, test, benchmark and demo targets. `make help` lists them.

GO        ?= go
BIN       := bin/opm
PKG       := github.com/opmkit/opm
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo devel)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
DATE      ?= $(shell date -u +%Y-%m-%dT%H:%M:%SZ)
LDFLAGS   := -X $(PKG)/internal/buildinfo.Version=$(VERSION) \
             -X $(PKG)/internal/buildinfo.GitCommit=$(COMMIT) \
             -X $(PKG)/internal/buildinfo.BuildDate=$(DATE)
FUZZTIME  ?= 30s

.PHONY: help build test unit conformance lint bench demo fuzz fuzz-smoke clean

help: ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/opm
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/opm

demo: build ## render and validate the example catalog
	$(BIN) render examples/catalog -o yaml
	$(BIN) validate examples/catalog
	@echo "examples/catalog renders and validates"

test: lint unit conformance ## everything CI runs: lint, unit and script tests (race detector), conformance

unit: ## unit, fuzz-corpus and txtar script tests with the race detector
	$(GO) test -race -count=1 -skip '^TestConformance$$' ./...

conformance: ## compare with upstream opm on ../shared/conformance (skips if absent); prints N of M per run kind
	@mkdir -p bin
	@OPM_CONFORMANCE_SUMMARY=$(CURDIR)/bin/conformance-summary.txt $(GO) test -count=1 -v -run '^TestConformance$$' ./internal/conformance > bin/conformance.log 2>&1; \
	status=$$?; \
	grep -E -e '--- SKIP|conformance suite not found' -e '^\s+conformance_test.go:[0-9]+: [a-z]+/.*: ' bin/conformance.log | grep -v 'not reproduced (not required)' | head -40; \
	sed -n '/^not reproduced:/q;p' bin/conformance-summary.txt 2>/dev/null; \
	tail -n 1 bin/conformance.log; \
	exit $$status

lint: ## gofmt and go vet
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

bench: build ## generated large catalogs: time, MB/s and peak RSS; plus Go benchmarks
	bash hack/bench.sh
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/declcfg/

fuzz: ## run every fuzz target of the module (found by hack/fuzz.sh) for FUZZTIME each
	FUZZTIME=$(FUZZTIME) GO=$(GO) bash hack/fuzz.sh

fuzz-smoke: ## run every fuzz target for 3s (CI)
	FUZZTIME=3s GO=$(GO) bash hack/fuzz.sh

clean:
	rm -rf bin
