# The two commands that matter: `make run` and `make test`.
GO      ?= go
BIN     ?= bin/server
PKGS    ?= ./...

.PHONY: run test build image generate migration lint staticcheck fuzz bench clean e2e openapi-lint

## run: build the server (bin/run/server, go's default flags: the build cache `go test` fills
## serves it too) and start it on the embedded SQLite database (data/app.db), on
## 127.0.0.1:8080 (ADDR=:8080 make run listens on every interface). It says so first: the
## first build compiles every dependency, minutes on a small machine, silent while it works
run:
	@echo "make run: building bin/run/server; the first build compiles every dependency and takes minutes (later ones, seconds)"
	@$(GO) build -o bin/run/server ./cmd/server
	@echo "make run: starting bin/run/server serve"
	@ADDR=$${ADDR:-127.0.0.1:8080} exec bin/run/server serve

## test: run every test (SQLite; PostgreSQL and Redis too when TEST_DATABASE_URL / TEST_REDIS_URL are set)
test:
	$(GO) test -count=1 -timeout 20m $(PKGS)

## build: build the binary into bin/server: -trimpath, -ldflags='-s -w' (no symbol table or
## DWARF: panics still print file:line, debuggers see less), -tags nomsgpack (gin without its
## MessagePack binding, which nothing here uses), -tags grpcnotrace (should gRPC be linked
## again, without golang.org/x/net/trace, whose html/template makes the linker keep every
## exported method: cmd/server's TestNoReflectMethodMarking), CGO_ENABLED=0 (a static binary
## that maps no libc: the SQLite driver is pure Go, and the DNS resolver and os/user are Go's own)
BUILDFLAGS ?= -trimpath -tags nomsgpack,grpcnotrace -ldflags='-s -w'
build:
	CGO_ENABLED=0 $(GO) build $(BUILDFLAGS) -o $(BIN) ./cmd/server

## image: the container image (Dockerfile) of the binary of `make build`, FROM scratch, tagged
## $(IMAGE); the build context build/image/ holds the binary, this machine's CA certificates
## (CA_CERTS), a passwd line for the non-root user 65532 and the folders /data and /tmp. Go
## compiles outside Docker, in the build cache `make build` shares, so a second image after a
## code change costs about a `make build`; Docker only copies five files in, with BuildKit
## (docker buildx) when it is installed, else the legacy builder (DOCKER_BUILD=… to choose)
IMAGE    ?= itemsvc:dev
DOCKER_BUILD ?= $(if $(shell docker buildx version 2>/dev/null),docker buildx build --load,DOCKER_BUILDKIT=0 docker build)
CA_CERTS ?= /etc/ssl/certs/ca-certificates.crt
image: build
	rm -rf build/image && mkdir -p build/image/data build/image/tmp
	chmod 1777 build/image/tmp
	cp $(BIN) build/image/server
	cp $(CA_CERTS) build/image/ca-certificates.crt
	echo 'itemsvc:x:65532:65532:itemsvc:/data:/sbin/nologin' > build/image/passwd
	$(DOCKER_BUILD) -q -t $(IMAGE) -f Dockerfile build/image

## generate: regenerate ent and gqlgen code (never edit generated code by hand)
generate:
	$(GO) generate ./...

## migration NAME=x: write a new versioned migration for SQLite and PostgreSQL from the ent schema
migration:
	@test -n "$(NAME)" || (echo "usage: make migration NAME=add_something" && exit 2)
	$(GO) run internal/migration/diff.go -name $(NAME)

## lint: the static checks CI runs
lint: staticcheck
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go') && exit 1)
	$(GO) vet ./...

## staticcheck: staticcheck at a pinned version (go run builds it once, outside go.mod, so
## that its dependencies never move the server's)
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2
staticcheck:
	$(GO) run $(STATICCHECK) ./...

## bench: measure the server against the lean reference (bench/): SQLite, or PostgreSQL with
## BENCH_DATABASE_URL; ARGS="-duration 5s -rows list,get" to narrow, ARGS=-write records BENCHMARKS.md
bench:
	$(GO) run ./bench/cmd/bench $(ARGS)

.PHONY: bench-micro
## bench-micro: the Go micro-benchmarks of the hot paths (token check, envelope, list query, router)
bench-micro:
	$(GO) test -run '^$$' -bench . -benchmem $${BENCH_PKGS:-./internal/service ./rest}

## fuzz: fuzz the item endpoints for a while (FUZZTIME=1m)
fuzz:
	$(GO) test ./rest -run '^$$' -fuzz FuzzItemBodies -fuzztime $${FUZZTIME:-1m}
	$(GO) test ./rest -run '^$$' -fuzz FuzzListQuery -fuzztime $${FUZZTIME:-1m}

## openapi-lint: lint rest/openapi/openapi.json with Redocly CLI (needs `npm ci` in e2e/); any warning fails (redocly.yaml)
openapi-lint:
	REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx --prefix e2e --no-install redocly lint rest/openapi/openapi.json

## e2e: browser test of the playground and the docs, offline, the real clients of the event streams,
## graphql-http's GraphQL-over-HTTP audit of the live server, and the typed clients of docs/clients.md
## generated from it and compiled with tsc --strict (needs /usr/bin/chromium and `npm ci` in e2e/);
## screenshot in test-output/
e2e:
	E2E=1 $(GO) test -count=1 -v -run 'TestPagesInBrowser|TestRealtimeClients|TestGraphQLOverHTTPAudit|TestTypedClients' ./e2e

clean:
	rm -rf bin build data test-output
