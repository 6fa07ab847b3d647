# pippet: see README.md. Every target works from a fresh clone.
GO       ?= go
BIN      := bin
RECEIVER := $(BIN)/receiver
PKGS     := ./...
FUZZTIME ?= 5m

.PHONY: all build install static test unit fmt-check vet bench bench-quick bench-go bench-e2e bench-catalog bench-agent test-catalogs fuzz demo clean oracle

all: build

# The commit the binary is built from, and -dirty when the tree has
# uncommitted changes: `receiver --version` prints it. Without git (or
# with `go install`), --version falls back to the build's VCS stamp.
COMMIT  := $(shell git describe --always --dirty 2>/dev/null)
LDFLAGS := -X main.commit=$(COMMIT)

build:
	$(GO) build -ldflags '$(LDFLAGS)' -o $(RECEIVER) ./cmd/receiver

# install: the receiver into $(DESTDIR)$(PREFIX)/bin, /usr/local/bin by
# default (`make install PREFIX=~/.local` for a user's own ~/.local/bin).
PREFIX ?= /usr/local
install: build
	install -d '$(DESTDIR)$(PREFIX)/bin'
	install -m 0755 $(RECEIVER) '$(DESTDIR)$(PREFIX)/bin/receiver'

# static: a receiver without cgo, statically linked, to copy to hosts that
# have no Go (and whatever C library): `scp bin/receiver-static
# HOST:/usr/local/bin/receiver`. Accounts and DNS are then read by Go's own
# code (the files, /etc/resolv.conf), as the receiver reads accounts anyway.
STATIC ?= $(BIN)/receiver-static
static:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(STATIC) ./cmd/receiver

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# test: format, vet, every unit test under the race detector (the
# integration package builds the real binary and runs the fixture streams
# and the Puppet oracle cases).
# The tests run with a TMPDIR of their own, and must not leave anything
# of it in pippet's own state on this machine (the default filebucket):
# internal/testutil/footprint finds it by its path, and make test fails
# naming the test files that a test backed up there.
test: fmt-check vet
	@tmp=$$(mktemp -d /tmp/pippet-test.XXXXXX) && chmod 755 $$tmp; \
	TMPDIR=$$tmp $(GO) test -race -count=1 -timeout 30m $(PKGS); rc=$$?; \
	if ! internal/testutil/footprint $$tmp; then \
	  echo "FAIL: the tests wrote to pippet's own state on this machine (a test must use its own state directory)"; rc=1; \
	fi; rm -rf $$tmp; exit $$rc

# test-catalogs: the real catalogs (the six shown, apache, and those
# compiled from Debian's Forge modules, integration/testdata/catalogs) and
# a purging `resources`, applied
# to this machine as Puppet applied them: packages installed and removed,
# /etc and services changed. Root, on a machine that may be changed.
test-catalogs:
	PIPPET_CHANGE_MACHINE=1 $(GO) test -count=1 -timeout 30m -run 'TestRealCatalogs|TestCatalogDelegatedResourcesPurge|TestApplyManifest' ./integration/

unit:
	$(GO) test -count=1 $(PKGS)

# fuzz: run each fuzz target for FUZZTIME (default 5m); `make test` runs
# their seed corpora (testdata/fuzz) as ordinary tests.
fuzz:
	$(GO) test -run '^$$' -fuzz '^FuzzDecodeLine$$' -fuzztime $(FUZZTIME) ./protocol
	$(GO) test -run '^$$' -fuzz '^FuzzParse$$' -fuzztime $(FUZZTIME) ./protocol/yamlparams
	$(GO) test -run '^$$' -fuzz '^FuzzAppendYAMLString$$' -fuzztime $(FUZZTIME) ./protocol

# oracle: the Puppet oracle's own score script against the built binary
# (it runs each case in a scratch directory, hence the absolute path).
ORACLE ?= ../shared/puppet-oracle
oracle: build
	$(ORACLE)/score -v $(CURDIR)/$(RECEIVER)

# bench: the in-process hot-path benchmarks, then the end-to-end run of the
# built binary against a syscall floor (BENCH_N resources per scenario;
# BENCH_PUPPET=1 adds the `puppet apply` reference row).
BENCH_N      ?= 10000
BENCH_RUNS   ?= 5
BENCH_PUPPET ?= 0
bench: bench-go bench-e2e bench-catalog

bench-go:
	$(GO) test -run '^$$' -bench . -benchmem ./bench/ ./protocol/ ./applier/ ./catalog/

# bench-catalog: receiver apply on whole catalogs (the real ones change the
# machine: root only; BENCH_PUPPET=1 adds puppet apply --catalog rows).
bench-catalog: build
	$(GO) run ./bench/catalog -receiver $(RECEIVER) -runs $(BENCH_RUNS) $(if $(filter 1,$(BENCH_PUPPET)),-puppet)

# bench-agent: `receiver agent -t` against `puppet agent -t` on a
# converged node, against a real Puppet Server the benchmark starts (root,
# Debian's puppetserver): wall time and each phase, BENCH_AGENT_N runs of
# each agent, interleaved. Slow: a minute for the server, seconds a run.
BENCH_AGENT_N ?= 5
bench-agent:
	$(GO) test -run '^$$' -bench '^BenchmarkAgentConverged$$' -benchtime $(BENCH_AGENT_N)x -timeout 60m ./integration/puppetserver/

bench-e2e: build
	$(GO) run ./bench/e2e -receiver $(RECEIVER) -n $(BENCH_N) -runs $(BENCH_RUNS) $(if $(filter 1,$(BENCH_PUPPET)),-puppet)

# bench-quick: a first look in about a minute, not figures to quote: each
# Go benchmark 200 times (the tidy ones, a walk of 100,000 files each, 3
# times), then the end-to-end run with 200 resources per scenario, one run
# each, without the account scenarios (making their 2,000 accounts alone
# takes minutes). Each part says what it starts.
bench-quick: build
	@echo "bench-quick: 1/3 the Go benchmarks, 200 iterations each (compiling the test binaries first)" >&2
	$(GO) test -run '^$$' -bench . -skip '^BenchmarkTidy' -benchtime 200x -benchmem ./bench/ ./protocol/ ./applier/
	@echo "bench-quick: 2/3 the tidy benchmarks, 3 walks of 100,000 files each (the tree is made first)" >&2
	$(GO) test -run '^$$' -bench '^BenchmarkTidy' -benchtime 3x -benchmem ./bench/
	@echo "bench-quick: 3/3 end to end, 200 resources per scenario, one run each (progress on stderr)" >&2
	$(GO) run ./bench/e2e -receiver $(RECEIVER) -n 200 -runs 1 -rss-n 2000 -skip '^(user|group) '

# demo: pipe examples/demo.ndjson through the receiver; answers on stdout,
# Puppet-style log on stderr. The stream writes under /tmp/pippet-demo
# (its first request creates it); here that path is rewritten to a
# directory of the user's own, emptied first, so that users sharing /tmp
# each get theirs.
DEMO_DIR ?= $(or $(TMPDIR),/tmp)/pippet-demo-$(shell id -un)
demo: build
	@rm -rf '$(DEMO_DIR)' '$(DEMO_DIR).state'
	sed 's|/tmp/pippet-demo|$(DEMO_DIR)|g' examples/demo.ndjson | $(RECEIVER) --log-level notice --state-dir '$(DEMO_DIR).state'
	@echo "--- $(DEMO_DIR):"; ls -lR '$(DEMO_DIR)'

clean:
	rm -rf $(BIN)
