# Flint build entry points. `make test` is what CI runs.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
PKGS := ./...
FUZZTIME ?= 10s
export PATH := $(BIN):$(PATH)

.PHONY: all build test vet e2e bench generate check-generate lint tools fuzz-smoke

all: build

build:
	$(GO) build -o $(BIN)/flint ./cmd/flint

tools:
	GOBIN=$(BIN) $(GO) install github.com/gogo/protobuf/protoc-gen-gogofaster

## generate: regenerate protobuf code and docs/configuration.md from their sources.
generate: tools
	$(GO) generate ./proto/...
	$(GO) run ./framework/config/gendoc

## check-generate: fail when committed generated files differ from a fresh `make generate`.
check-generate: generate
	@git diff --exit-code -- proto docs/configuration.md || { echo "generated files are stale: run 'make generate' and commit"; exit 1; }

vet:
	$(GO) vet $(PKGS)

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## test: vet, gofmt, the whole suite with the race detector (goleak runs in each package's TestMain), then the allocation tests without it.
test: lint
	$(GO) test -race -count=1 -timeout 20m $(PKGS)
	@# Allocation counts are only meaningful without the race detector: run those tests again without it.
	$(GO) test -count=1 -run 'Allocations' ./framework/codec/

## fuzz-smoke: run each fuzz target briefly (seed corpora always run as part of `make test`).
fuzz-smoke:
	@for pkg in $$($(GO) list ./...); do \
	  for fn in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$fn"; \
	    $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; done

## e2e: the Docker end-to-end suites alone (dockertest; `make test` runs them too). Needs Docker, no registry.
e2e:
	$(GO) test -race -count=1 -timeout 10m ./e2e/...

## bench: every benchmark recorded in docs/benchmarks.md (several minutes).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./framework/scheduler/ ./framework/local/ ./deploy/minimesos/allocator/ ./fine/
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./executor/ ./deploy/minimesos/master/
	$(GO) test -run '^$$' -bench . -benchtime 300x ./deploy/minimesos/agent/
	$(GO) test -run '^$$' -bench . -benchtime 20000x ./coarse/gateway/
	$(GO) test -run '^$$' -bench . ./coarse/ ./deploy/embedded/ ./uri/
