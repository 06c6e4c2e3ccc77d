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
# staticcheck, built from the module proxy at this version into bin/.
STATICCHECK_VERSION := v0.8.2
STATICCHECK := bin/staticcheck-$(STATICCHECK_VERSION)

.PHONY: help build test unit scripts-updated conformance lint bench demo fuzz fuzz-smoke clean install image

help: ## list targets
	@grep -E '^[a-z-]+:.*##' $(MAKEFILE_LIST) | sed 's/:.*## /\t/'

build: ## build bin/opm
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/opm

install: ## go install opm (into GOBIN, default ~/go/bin) with the version stamped
	CGO_ENABLED=0 $(GO) install -trimpath -ldflags '$(LDFLAGS)' ./cmd/opm

# The opm image: static executables for IMAGE_PLATFORMS, assembled by
# hack/opmimage (pkg/imagebuild) into one multi-platform index, written to
# each of IMAGE (any `opm build -t` form: an OCI layout by default, a
# registry, an oci-archive). Its files and config carry SOURCE_DATE_EPOCH
# (the commit's time by default), so the same commit gives the same digest.
IMAGE_PLATFORMS   ?= linux/amd64 linux/arm64 linux/ppc64le linux/s390x
IMAGE_DIR         := bin/image
IMAGE             ?= oci:$(IMAGE_DIR)/layout:$(VERSION)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
IMAGE_LDFLAGS     := -X $(PKG)/internal/buildinfo.Version=$(VERSION) \
                     -X $(PKG)/internal/buildinfo.GitCommit=$(COMMIT) \
                     -X $(PKG)/internal/buildinfo.BuildDate=$(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)

image: ## the opm image (IMAGE_PLATFORMS) into IMAGE: an OCI layout in bin/image by default; digest and sizes printed
	@mkdir -p $(IMAGE_DIR)
	@for p in $(IMAGE_PLATFORMS); do \
		echo "go build $$p"; \
		CGO_ENABLED=0 GOOS=$${p%%/*} GOARCH=$${p#*/} $(GO) build -trimpath -ldflags '$(IMAGE_LDFLAGS)' -o $(IMAGE_DIR)/opm-$${p%%/*}-$${p#*/} ./cmd/opm || exit 1; \
	done
	SOURCE_DATE_EPOCH=$(SOURCE_DATE_EPOCH) $(GO) run ./hack/opmimage -version '$(VERSION)' -revision '$(COMMIT)' \
		$(foreach p,$(IMAGE_PLATFORMS),-binary $(p)=$(IMAGE_DIR)/opm-$(subst /,-,$(p))) $(foreach t,$(IMAGE),-t $(t))

demo: build ## render and validate the example catalog
	$(BIN) render examples/catalog -o yaml
	$(BIN) validate examples/catalog
	@echo "examples/catalog renders and validates"

test: lint unit scripts-updated conformance ## everything CI runs: lint, unit and script tests (race detector), the update-switch check, conformance

# go test's hang guard. Its 10-minute default is too close to what cmd/opm's
# scripts take under the race detector on a loaded 2-core machine (about 7
# minutes, 10 when other jobs share the cores); a hang still fails the run.
TEST_TIMEOUT ?= 30m

# Every package but internal/conformance, whose tests `make conformance` runs.
UNIT_PKGS  = $(shell $(GO) list ./... | grep -v '/internal/conformance$$')

unit: ## every test of every package (fuzz corpora and txtar scripts too) with the race detector, except internal/conformance
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(UNIT_PKGS)

scripts-updated: ## the txtar scripts' expected outputs are up to date: OPM_UPDATE=1 rewrites none of them
	OPM_UPDATE=1 $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -run '^(TestScript|TestImageScript)$$' ./cmd/opm
	@if git rev-parse --git-dir >/dev/null 2>&1; then \
		git diff --exit-code --stat -- cmd/opm/testdata || { echo "OPM_UPDATE=1 changed the scripts above: their expected output is stale; review and commit the update"; exit 1; }; \
	else echo "not a git checkout: cannot check that OPM_UPDATE=1 left the scripts unchanged"; fi

conformance: ## every test of internal/conformance: upstream opm's runs in ../shared/conformance (skips if absent); prints N of M per run kind
	@mkdir -p bin
	@OPM_CONFORMANCE_SUMMARY=$(CURDIR)/bin/conformance-summary.txt $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -v ./internal/conformance > bin/conformance.log 2>&1; \
	status=$$?; \
	grep -E -e '--- SKIP|conformance suite not found' -e '^\s+[a-z_]+_test\.go:[0-9]+: [a-z]+/.*: ' bin/conformance.log | grep -v 'not reproduced (not required)' | head -40; \
	sed -n '/^not reproduced:/q;p' bin/conformance-summary.txt 2>/dev/null; \
	tail -n 1 bin/conformance.log; \
	exit $$status

lint: $(STATICCHECK) ## gofmt, go vet and staticcheck
	@out="$$(gofmt -l .)"; if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...
	$(STATICCHECK) ./...

$(STATICCHECK):
	@mkdir -p bin
	GOBIN=$(CURDIR)/bin/staticcheck.tmp $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	mv bin/staticcheck.tmp/staticcheck $@ && rmdir bin/staticcheck.tmp

bench: build ## generated large catalogs: time, MB/s and peak RSS; plus Go benchmarks
	bash hack/bench.sh
	bash hack/bench-serve.sh
	bash hack/bench-bundles.sh
	$(GO) test -run '^$$' -bench . -benchmem ./pkg/declcfg/

fuzz: ## run every fuzz target of the module (found by hack/fuzz.sh) for FUZZTIME each
	FUZZTIME=$(FUZZTIME) GO=$(GO) bash hack/fuzz.sh

fuzz-smoke: ## run every fuzz target for 3s (CI)
	FUZZTIME=3s GO=$(GO) bash hack/fuzz.sh

clean:
	rm -rf bin
