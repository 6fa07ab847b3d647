# pippet: see README.md. Every target works from a fresh clone.
GO       ?= go
BIN      := bin
RECEIVER := $(BIN)/receiver
PKGS     := ./...
FUZZTIME ?= 5m

.PHONY: all build test unit fmt-check vet bench fuzz demo clean oracle

all: build

build:
	$(GO) build -o $(RECEIVER) ./cmd/receiver

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

# test: format, vet, every unit test under the race detector (the
# integration package builds the real binary and runs the fixture streams
# and the Puppet oracle cases).
test: fmt-check vet
	$(GO) test -race -count=1 $(PKGS)

unit:
	$(GO) test -count=1 $(PKGS)

oracle: build
	../shared/puppet-oracle/score -v ./$(RECEIVER)

demo: build
	@rm -rf /tmp/pippet-demo && mkdir -p /tmp/pippet-demo
	./$(RECEIVER) < examples/demo.ndjson

clean:
	rm -rf $(BIN)
