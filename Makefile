# Local checks, none of which needs root (see docs/development.md, "Working locally").
# `make` runs lint and the tests; `make ci` runs .ci/run, which also installs the system
# components the tests use when run as root.

STATICCHECK ?= $(shell command -v staticcheck || echo $(shell go env GOPATH)/bin/staticcheck)

.PHONY: all lint test race docs ci

all: lint test

lint:
	@out=$$(gofmt -l $$(git ls-files "*.go")); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	go vet ./...
	@test -x $(STATICCHECK) || go install honnef.co/go/tools/cmd/staticcheck@v0.8.2
	$(STATICCHECK) ./...

test:
	go test ./...

race:
	go test -race -timeout 30m ./...

# docs regenerates docs/config.md from the code and rewrites the expected output of the
# doc examples that drifted: read the diff before committing it.
docs:
	go run ./config/gen
	go test ./docs -run TestExamples -update
	git diff --stat -- docs README.md

ci:
	.ci/run
