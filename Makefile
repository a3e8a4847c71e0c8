# addon-operator developer targets. `make help` lists them.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO          ?= go
BIN_DIR     := bin
CLUSTER_DIR := $(CURDIR)/.cluster
LINT        := $(GO) tool -modfile=tools/go.mod golangci-lint
# Unit tests: every package outside e2e/. E2E packages start their own
# control plane (see e2e/cluster) and run one package per process.
UNIT_PKGS    = $(shell $(GO) list ./... | grep -v /e2e/)
E2E_PKGS     = $(shell $(GO) list ./e2e/... | grep -v -e /e2e/cluster)
E2E_TIMEOUT ?= 30m

.PHONY: help
help: ## list targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_ -]+:.*## / {printf "  %-28s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: packages-run packages-test
packages-run packages-test: ## install missing Debian packages (jq; gcc and Chromium for tests)
	@hack/packages/ensure.sh $(@:packages-%=%)

.PHONY: run
run: packages-run build ## run the operator with ./modules and ./global-hooks against KUBECONFIG, else a local control plane
	@if [ -z "$${KUBECONFIG:-}" ]; then \
		eval "$$($(GO) run ./e2e/cluster/cmd/localcluster up $(CLUSTER_DIR))"; \
		echo "using the local control plane (make cluster-down stops it): KUBECONFIG=$$KUBECONFIG" >&2; \
	fi; \
	export KUBECONFIG; \
	exec $(BIN_DIR)/addon-operator start \
		--namespace "$${ADDON_OPERATOR_NAMESPACE:-addon-operator}" \
		--modules-dir "$${ADDON_OPERATOR_MODULES_DIR:-$(CURDIR)/modules}" \
		--global-hooks-dir "$${ADDON_OPERATOR_GLOBAL_HOOKS_DIR:-$(CURDIR)/global-hooks}" \
		--tmp-dir "$(CURDIR)/.tmp" \
		--debug-socket "$(CURDIR)/.tmp/debug.socket"

.PHONY: build
build: ## build bin/addon-operator
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN_DIR)/addon-operator ./cmd/addon-operator

.PHONY: test
test: packages-test lint check-deploy test-unit test-e2e ## everything CI runs: lint, deploy/ in sync, unit tests, e2e tests

.PHONY: test-unit
test-unit: ## unit tests with the race detector
	$(GO) test -race -count=1 $(UNIT_PKGS)

.PHONY: control-plane
control-plane: ## build (or reuse from cache) etcd and kube-apiserver
	$(GO) run ./e2e/cluster/cmd/localcluster build

.PHONY: test-e2e
test-e2e: control-plane ## end-to-end tests against a local control plane
	$(GO) test -count=1 -timeout $(E2E_TIMEOUT) $(E2E_PKGS)

.PHONY: lint
lint: ## golangci-lint (pinned in tools/go.mod) over the product and the control-plane tools
	$(LINT) run ./...

.PHONY: fmt
fmt: ## format the code
	$(LINT) fmt ./...

.PHONY: tidy
tidy: ## tidy every Go module in the repository
	$(GO) mod tidy
	cd tools && $(GO) mod tidy
	cd e2e/cluster/tools && $(GO) mod tidy

.PHONY: bench
bench: ## measure start-to-converged, reactions, healing, idle CPU and RSS for 10 and 100 modules
	$(GO) run ./e2e/bench/cmd/bench -n 10,100 -workers-sweep 1,2,4,8 -objects-n 100

.PHONY: deploy
deploy: ## regenerate deploy/addon-operator.yaml from charts/addon-operator
	$(GO) run ./hack/gendeploy

.PHONY: check-deploy
check-deploy: ## fail when deploy/ is out of sync with charts/addon-operator
	$(GO) run ./hack/gendeploy -check

.PHONY: cluster-up
cluster-up: ## start a local control plane and print the export KUBECONFIG=... line
	@$(GO) run ./e2e/cluster/cmd/localcluster up $(CLUSTER_DIR)

.PHONY: cluster-down
cluster-down: ## stop the local control plane started by cluster-up
	@$(GO) run ./e2e/cluster/cmd/localcluster down $(CLUSTER_DIR)
