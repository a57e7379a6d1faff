# Flint build entry points. `make test` is what CI runs.
SHELL := /bin/bash
GO ?= go
BIN := $(CURDIR)/bin
PKGS := ./...
FUZZTIME ?= 10s
export PATH := $(BIN):$(PATH)

.PHONY: versitygw all build test vet e2e simulate bench bench-datasets bench-datasets-full generate check-generate lint tools fuzz-smoke stress stress-jobs

all: build

build:
	$(GO) build -o $(BIN)/flint ./cmd/flint

## versitygw: the S3-compatible server the storage tests start (internal/testkit/s3server), built from
## its Go module at a pinned version into bin/, statically (CGO_ENABLED=0): the same binary
## runs on loopback and in the Docker end-to-end suite's FROM scratch image (deploy/versitygw).
VERSITYGW_VERSION := v1.8.0
versitygw: $(BIN)/.versitygw-$(VERSITYGW_VERSION)-static
$(BIN)/.versitygw-$(VERSITYGW_VERSION)-static:
	CGO_ENABLED=0 GOBIN=$(BIN) $(GO) install github.com/versity/versitygw/cmd/versitygw@$(VERSITYGW_VERSION)
	touch $@

tools:
	GOBIN=$(BIN) $(GO) install github.com/gogo/protobuf/protoc-gen-gogofaster

## generate: regenerate protobuf code and docs/configuration.md from their sources.
generate: tools
	$(GO) generate ./proto/...
	$(GO) run ./cmd/flint gen-config-doc

## check-generate: fail when committed generated files differ from a fresh `make generate`.
check-generate: generate
	@git diff --exit-code -- proto docs/configuration.md || { echo "generated files are stale: run 'make generate' and commit"; exit 1; }

vet:
	$(GO) vet $(PKGS)

lint: vet
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

## test: vet, gofmt, the whole suite with the race detector (goleak runs in each package's TestMain), then the allocation tests without it.
## The suite keeps every log it produces (go test's output, drivers' and clusters' logs, every
## sandbox's stdout/stderr) in $(TESTLOGS) and fails if a test secret is in any (scripts/check-test-secrets).
TESTLOGS := $(BIN)/testlogs
test: lint versitygw
	@rm -rf $(TESTLOGS) && mkdir -p $(TESTLOGS)
	set -o pipefail; FLINT_TEST_LOG_DIR=$(TESTLOGS) $(GO) test -race -count=1 -timeout 20m $(PKGS) 2>&1 | tee $(TESTLOGS)/go-test.log
	scripts/check-test-secrets $(TESTLOGS)
	@# Allocation counts are only meaningful without the race detector: run those tests again without it.
	$(GO) test -count=1 -run 'Allocations' ./framework/codec/
	@# The deterministic simulation (internal/devtools/sim) over seeds 1..$(SIM_SEEDS), without the race detector (make simulate).
	SIM_SEEDS=$(SIM_SEEDS) $(GO) test -count=1 -timeout 10m -run '^TestSimulate$$' ./internal/devtools/sim/

## fuzz-smoke: run each fuzz target briefly (seed corpora always run as part of `make test`).
fuzz-smoke:
	@for pkg in $$($(GO) list ./...); do \
	  for fn in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz'); do \
	    echo "fuzz $$pkg $$fn"; \
	    $(GO) test -run '^$$' -fuzz "^$$fn$$" -fuzztime $(FUZZTIME) $$pkg || exit 1; \
	  done; done

## stress: the process- and timer-heavy suites -count=$(STRESS_COUNT) times under -race while internal/devtools/cpuburn keeps every CPU busy; lists every failure (.ci/stress).
STRESS_COUNT ?= 10
stress:
	STRESS_COUNT=$(STRESS_COUNT) ./.ci/stress

## stress-jobs: $(STRESS_JOBS) fine-mode pi jobs on the embedded master; fails on any failed job or "text file busy" (.ci/stress-jobs).
STRESS_JOBS ?= 50
stress-jobs:
	STRESS_JOBS=$(STRESS_JOBS) ./.ci/stress-jobs

## simulate: the deterministic simulation of a Mesos cluster under the real driver (loop, task and
## DAG cores) and both Mesos backends, fine and coarse (internal/devtools/sim), seeds 1..$(SIM_SEEDS) with faults, every invariant checked
## after every step; a failing seed prints itself, its replay command and its last steps.
## SIM_SEED=n replays one seed. `make test` runs it too (CI).
SIM_SEEDS ?= 300
simulate:
	SIM_SEEDS=$(SIM_SEEDS) $(GO) test -count=1 -timeout 30m -run '^TestSimulate$$' -v ./internal/devtools/sim/

## e2e: the Docker end-to-end suites alone (dockertest; `make test` runs them too). Needs Docker, no registry.
e2e:
	$(GO) test -race -count=1 -timeout 10m ./e2e/...

## bench-datasets: wordcount, sort and join beside their baselines at sizes for a small shared
## machine (scripts/bench-datasets.sh; docs/benchmarks.md); bench-datasets-full: the issue's sizes.
bench-datasets:
	scripts/bench-datasets.sh 64m 64m 32m
bench-datasets-full:
	scripts/bench-datasets.sh 1g 2g 1g

## bench: every benchmark recorded in docs/benchmarks.md (several minutes).
bench:
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 3x ./framework/scheduler/ ./framework/local/ ./deploy/minimesos/allocator/ ./fine/
	$(GO) test -run '^$$' -bench . -benchmem -benchtime 2s ./executor/ ./deploy/minimesos/master/
	$(GO) test -run '^$$' -bench . -benchtime 300x ./deploy/minimesos/agent/
	$(GO) test -run '^$$' -bench . -benchtime 20000x ./coarse/gateway/
	$(GO) test -run '^$$' -bench . ./coarse/ ./deploy/embedded/ ./uri/
	$(GO) test -run '^$$' -bench Pair -benchtime 200000x ./framework/recordcodec/
	$(GO) test -run '^$$' -bench Writer -benchtime 3x ./shuffle/
	$(GO) test -run '^$$' -bench Shuffle -benchtime 1x ./shuffle/shufflefetch/
	$(GO) test -run '^$$' -bench EmptyTasksUI -benchtime 3x ./framework/
	$(GO) test -run '^$$' -bench FoldTask -benchmem -benchtime 300000x ./framework/uistore/
	$(GO) test -c -o $(BIN)/shuffle.test ./shuffle/ && $(BIN)/shuffle.test -test.run '^$$' -test.bench SortFourTimes -test.benchtime 1x
