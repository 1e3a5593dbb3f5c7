# code-wasm: build, test tiers, benchmarks and the playground.
# `make run` and `make test` are the two commands a newcomer needs; every
# other target is what they are made of.

SHELL := /bin/bash
GO ?= go
GOROOT := $(shell $(GO) env GOROOT)
export GONOSUMDB := github.com/syumai,github.com/fastschema,github.com/hack-pad
export GOFLAGS := -buildvcs=false

WASM := npm/dist/code.wasm
WASM_EXEC := npm/src/wasm_exec.js
# QuickJS's wasm for the workerd entry, which imports it as a module; the
# copy comes from the variant npm/package.json pins (checked here).
QJS_WASM := npm/dist/quickjs.wasm
QJS_PKG := node_modules/@jitl/quickjs-ng-wasmfile-release-sync
GO_SOURCES := $(shell find . -name '*.go' -not -path './node_modules/*' -not -path './.git/*') go.mod go.sum
NODE_DEPS := node_modules/.installed
# The one version: npm/package.json's, stamped into the wasm (api.version).
VERSION := $(shell node -p "require('./npm/package.json').version")
# Go packages whose tests also run under GOOS=js GOARCH=wasm in Node.
WASM_TEST_PKGS := ./workspace/... ./internal/... ./kernel/... ./tools/...

.PHONY: build test run bench clean deps debs test-go test-vet test-types test-wasm test-npm test-browser test-workerd

build: $(WASM) $(WASM_EXEC) $(QJS_WASM)

$(WASM): $(GO_SOURCES) npm/package.json
	@mkdir -p $(dir $@)
	GOOS=js GOARCH=wasm $(GO) build -trimpath -ldflags="-s -w -X main.version=$(VERSION)" -o $@ ./wasm
	@ls -l $@ | awk '{print "built " $$9 " (" $$5 " bytes)"}'

# Go's js/wasm glue, copied with one first line that keeps it out of
# make test-types (which checks the package's own files only).
$(WASM_EXEC): $(GOROOT)/lib/wasm/wasm_exec.js Makefile
	{ echo "// @ts-nocheck: Go's wasm_exec.js, copied by make build."; cat $<; } > $@

# What the tests need beyond Go and Node: Debian's chromium and ripgrep
# (installed with apt-get when missing and running as root), and the Node
# tooling (playwright-core, workerd, wrangler, vite) from package-lock.json.
DEBS := chromium:chromium rg:ripgrep bwrap:bubblewrap
deps: $(NODE_DEPS) debs
debs:
	@missing=""; for d in $(DEBS); do cmd=$${d%%:*}; pkg=$${d##*:}; command -v $$cmd >/dev/null || missing="$$missing $$pkg"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else echo "missing Debian packages:$$missing (run: sudo apt-get install$$missing)"; exit 1; fi; \
	fi
$(NODE_DEPS): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

# Hard bounds: a hang fails, naming what hung, well inside CI's 90 minutes.
# $(call bounded,MIN,command) runs command in a process group of its own and
# kills the whole group after MIN minutes (KILL 30 s after TERM). Inside it
# each test binary has `go test -timeout`, and each node test file
# NODE_FILE_BOUND plus web/test/watchdog.mjs (a file that leaves a process
# running fails, naming the file and the process).
# At a terminal --foreground keeps Ctrl-C working (timeout's own process
# group would not get it); the bound then kills the tier's first process only.
BOUND_FG := $(shell [ -t 0 ] && echo --foreground)
bounded = timeout $(BOUND_FG) -k 30s $(1)m $(2) || { rc=$$?; if [ $$rc = 124 ] || [ $$rc = 137 ]; then echo "make $@: still running after $(1) minutes: killed (the test file or package it was running is named above)"; fi; exit $$rc; }
GO_TEST := $(GO) test -count=1 -timeout 15m
export NODE_FILE_BOUND := 900000
NODE_TEST := node --test --import ./web/test/watchdog.mjs --test-timeout=$(NODE_FILE_BOUND)

test: deps test-vet test-types test-go test-wasm test-npm test-browser test-workerd
	@echo "make test: every tier passed"

# Opt-in, not part of `make test`: the Node tiers in two lanes at once,
# test-npm beside test-browser then test-workerd (RATIONALE "Why are the
# Node tiers not run in two lanes by `make test`?"). Each lane runs one test file at a time and keeps about one
# core busy (the rest is waiting: timeouts, child processes, the browser's
# round trips), so alone each leaves one of CI's two cores idle. Every
# line carries its lane's prefix; both lanes run to their end, and the
# target fails if either did. BOUND_FG is passed down: a lane's stdin is
# not the terminal, and Ctrl-C must still reach its tier.
.PHONY: test-node-lanes
test-node-lanes: build $(WASM_EXEC) $(NODE_DEPS)
	@set -o pipefail; \
	{ $(MAKE) --no-print-directory BOUND_FG=$(BOUND_FG) test-npm 2>&1 | sed -u 's/^/[npm] /'; } & npm=$$!; \
	$(MAKE) --no-print-directory BOUND_FG=$(BOUND_FG) test-browser test-workerd 2>&1 | sed -u 's/^/[browser] /'; b=$$?; \
	wait $$npm; n=$$?; \
	echo "make test-node-lanes: test-npm exit $$n, test-browser and test-workerd exit $$b"; \
	test $$n = 0 && test $$b = 0

test-vet:
	$(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet ./...
	GOOS=js GOARCH=wasm $(GO) vet -tags codewasm_core ./wasm ./core ./internal/hostapi ./tools
	@test -z "$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))" || { echo "gofmt needed:"; gofmt -l .; exit 1; }

# tsc --noEmit --checkJs of npm/src/*.mjs against npm/index.d.ts
# (npm/tsconfig.json; npm/types/entries.ts holds each entry point to it).
test-types: $(WASM_EXEC) $(NODE_DEPS)
	node_modules/.bin/tsc --noEmit --checkJs -p npm/tsconfig.json

# -race where goroutines meet; these packages and their tests start no
# goroutine and share no memory, so they run without it (3-10x faster:
# tools/internal/linematch 95 s -> 9 s at load 24).
GO_NORACE_PKGS := ./errkind ./vpath ./toolargs ./internal/hostcall ./internal/jsoncheck ./internal/repocheck ./internal/scan ./internal/testkit ./tools/internal/... ./workspace/internal/...
# ptc's tests (every engine's red-team pack, Node and Chromium hosts) took
# 11.5 of their binary's 15 minutes under -race at load 23, and the -race
# line 22 minutes: 25 and 40 leave a busy machine room.
test-go:
	$(call bounded,15,$(GO_TEST) $(GO_NORACE_PKGS))
	$(call bounded,40,$(GO_TEST) -timeout 25m -race $$($(GO) list ./... | grep -vxF "$$($(GO) list $(GO_NORACE_PKGS))"))

test-wasm:
	$(call bounded,25,env PATH="$(GOROOT)/lib/wasm:$$PATH" GOOS=js GOARCH=wasm $(GO_TEST) $(WASM_TEST_PKGS))

test-npm: build
	$(call bounded,30,node npm/test/run-packed.mjs)

# A Worker importing the packed package, bundled by wrangler and served by
# the real workerd binary on 127.0.0.1 (about 20 s).
test-workerd: build $(NODE_DEPS)
	$(call bounded,10,node npm/test/workerd/run.mjs)

# The browser tier: Debian's chromium driven by playwright-core: the OPFS
# driver's conformance suite in a worker, crash safety, the packed package
# in a Vite build, and the playground driven like a person.
test-browser: build $(WASM_EXEC) $(NODE_DEPS)
	$(call bounded,40,$(NODE_TEST) --test-concurrency=1 web/test/*.test.mjs)

run: build
	node web/serve.mjs --port 8080

bench: build
	node bench/run.mjs

clean:
	rm -rf $(WASM) $(WASM_EXEC) $(QJS_WASM) build .cache

# --- LLM providers (llm/, internal/fetch; issue 13) ---
# Their tests need the scripted provider server; a wasm instance cannot
# listen, so the helper binary serves it and runs the js/wasm tests with
# LLMTEST_URL set (natively the tests start it in-process).
LLM_WASM_TEST_PKGS := ./llm/... ./internal/fetch
.PHONY: test-wasm-llm
test-wasm: test-wasm-llm
test-wasm-llm:
	$(call bounded,20,$(GO) run ./llm/llmtest/cmd/llmtestserver -- env PATH="$(GOROOT)/lib/wasm:$$PATH" GOOS=js GOARCH=wasm $(GO_TEST) $(LLM_WASM_TEST_PKGS))
# The official SDKs (openai, @anthropic-ai/sdk) parse the scripted streams.
.PHONY: test-llm-sdk
test-npm: test-llm-sdk
test-llm-sdk: $(NODE_DEPS)
	$(call bounded,10,$(NODE_TEST) llm/llmtest/sdk.test.mjs)

# --- The agent loop (agent/; issue 13) ---
# Its wire tests run against the same scripted server under js/wasm.
LLM_WASM_TEST_PKGS += ./agent/

# --- generate_object (tools/generate_object.go; issue 13) ---
# Its scripted-server tests under js/wasm, with the helper server (the
# tools tier's plain run skips them: LLMTEST_URL is unset there).
.PHONY: test-wasm-genobj
test-wasm: test-wasm-genobj
test-wasm-genobj:
	$(call bounded,15,$(GO) run ./llm/llmtest/cmd/llmtestserver -- env PATH="$(GOROOT)/lib/wasm:$$PATH" GOOS=js GOARCH=wasm $(GO_TEST) -run GenerateObject ./tools/)

# --- MCP client (mcp/; issue 15) ---
# server-everything (pinned in package.json) on 127.0.0.1: natively in
# test-go, under js/wasm through the npm package's Node entry here.
.PHONY: test-npm-mcp
test-npm: test-npm-mcp
test-npm-mcp: build $(NODE_DEPS)
	$(call bounded,10,$(NODE_TEST) --test-concurrency=1 mcp/test/*.test.mjs)

# --- Cloudflare Workers (issue 17) ---
$(QJS_WASM): $(QJS_PKG)/dist/emscripten-module.wasm npm/package.json
	@want=$$(node -p "require('./npm/package.json').dependencies['@jitl/quickjs-ng-wasmfile-release-sync']"); \
	have=$$(node -p "require('./$(QJS_PKG)/package.json').version"); \
	test "$$want" = "$$have" || { echo "$(QJS_PKG) is $$have, npm/package.json pins $$want: run make deps"; exit 1; }
	@mkdir -p $(dir $@)
	cp $< $@
# The package's Worker entry (@a3s-lab/code-wasm/worker) as an app deploys
# it, under wrangler dev (local R2 and SQLite Durable Objects).
.PHONY: test-workerd-entry
test-workerd: test-workerd-entry
test-workerd-entry: build $(NODE_DEPS)
	$(call bounded,10,node npm/test/workerd/entry.mjs)
# The same entry on plain workerd serve: Durable Objects on local disk, R2
# through the checked-in gateway (npm/test/workerd/r2gateway.mjs).
.PHONY: test-workerd-serve
test-workerd: test-workerd-serve
test-workerd-serve: build $(NODE_DEPS)
	$(call bounded,10,node npm/test/workerd/serve.mjs)

# --- wasm size (issue 18) ---
# The JSON-Schema fork's decimal numbers (third_party/jsonschema/decimal,
# which replaced math/big) checked against math/big's Rat; the fork is a
# module of its own, so ./... does not reach it.
.PHONY: test-go-decimal
test-go: test-go-decimal
test-go-decimal:
	$(call bounded,5,$(GO_TEST) github.com/santhosh-tekuri/jsonschema/v6/decimal)
