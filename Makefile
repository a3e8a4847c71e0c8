# addon-operator developer targets. `make help` lists them.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

GO          ?= go
BIN_DIR     := bin
CLUSTER_DIR := $(CURDIR)/.cluster
LINT        := $(GO) tool -modfile=tools/go.mod golangci-lint
CONTROLLER_GEN := $(GO) tool -modfile=tools/go.mod controller-gen
# What make generate writes: the API's deepcopy code and CRDs (from the
# kubebuilder markers in pkg/apis), the chart's and the execution-hooks
# module's copies of the CRDs, and deploy/, which carries the chart's.
GENERATED   := pkg/apis/v1alpha1/zz_generated.deepcopy.go pkg/apis/v1alpha1/crds \
	pkg/apis/hooks/v1alpha1/zz_generated.deepcopy.go modules/060-execution-hooks/crds \
	charts/addon-operator/crds deploy/addon-operator.yaml deploy/crds.yaml
# Unit tests: every package outside e2e/. E2E packages start their own
# control plane (see e2e/cluster) and run one package per process.
UNIT_PKGS    = $(shell $(GO) list ./... | grep -v /e2e/)
E2E_PKGS     = $(shell $(GO) list ./e2e/... | grep -v -e /e2e/cluster)
E2E_TIMEOUT ?= 30m
# How long the local control plane's simulated nodes take to start a Pod.
POD_START_DELAY ?= 1s
VERSION     ?= dev
COMMIT      ?= $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
IMAGE_DIR   := $(CURDIR)/.image

.PHONY: help
help: ## list targets
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z0-9_ -]+:.*## / {printf "  %-28s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: packages-run packages-test
packages-run packages-test: ## install missing Debian packages (jq; gcc and Chromium for tests)
	@hack/packages/ensure.sh $(@:packages-%=%)

.PHONY: run
run: packages-run build ## run the operator with ./modules and ./global-hooks against KUBECONFIG, else a local control plane
	@if [ -z "$${KUBECONFIG:-}" ]; then \
		eval "$$($(GO) run ./e2e/cluster/cmd/localcluster up -pod-start-delay $(POD_START_DELAY) $(CLUSTER_DIR))"; \
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
build: hooks ## build bin/addon-operator (and the modules' Go hooks)
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$(VERSION) -X main.commit=$(COMMIT)" -o $(BIN_DIR)/addon-operator ./cmd/addon-operator

.PHONY: hooks
hooks: ## build the modules' Go hooks (modules/*/hooks-go) into their hooks/ dirs
	$(GO) run ./hack/buildhooks

.PHONY: test
test: packages-test lint verify check-deploy test-unit test-e2e ## everything CI runs: lint, generated files and deploy/ in sync, unit tests, e2e tests

.PHONY: test-unit
test-unit: ## unit tests with the race detector
	$(GO) test -race -count=1 $(UNIT_PKGS)

.PHONY: control-plane
control-plane: ## build (or reuse from cache) etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok and kubectl
	$(GO) run ./e2e/cluster/cmd/localcluster build

.PHONY: kubectl
kubectl: ## build (or reuse from cache) kubectl of the local control plane's version, linked as bin/kubectl
	@mkdir -p $(BIN_DIR)
	@ln -sf "$$($(GO) run ./e2e/cluster/cmd/localcluster kubectl)" $(BIN_DIR)/kubectl
	@echo "$(BIN_DIR)/kubectl" >&2

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
	cd e2e/cluster/tools/controllers && $(GO) mod tidy
	cd e2e/cluster/tools/kwok && $(GO) mod tidy
	cd e2e/cluster/tools/kubectl && $(GO) mod tidy

# The published charts the bench deploys as modules (read, never copied here).
CORPUS_CHARTS ?= $(CURDIR)/../shared/corpus/charts

.PHONY: bench
bench: ## measure Deployment modules (100 and 1000, pods ready after 0 s and 2 s) and the corpus's charts beside the reference v1.5.0; 100 modules with one never ready; hook runs; start-to-converged, reactions, healing, idle CPU and RSS for 10, 100 and 1000 modules; Module objects' cost; webhook round trips beside shell-operator v1.4.12
	jq=$$(hack/jq/build.sh) && \
	$(GO) run ./e2e/bench/cmd/bench -jq "$$jq" -deploy-n 100,1000 -deploy-delays 0s,2s -deploy-reference 100 -deploy-stuck 100 -charts "$(CORPUS_CHARTS)" \
		-n 10,100,1000 -reference 100 -watched 10000 -burst 200 -workers-sweep 1,2,4,8 -objects-n 100 && \
	$(GO) run ./e2e/bench/cmd/webhookbench -jq "$$jq" -requests 400 -concurrency 1,10

.PHONY: bench-quick
bench-quick: ## about 2 minutes: 20 Deployment modules, pods ready after 2 s, ours beside the reference v1.5.0
	jq=$$(hack/jq/build.sh) && \
	$(GO) run ./e2e/bench/cmd/bench -jq "$$jq" -n none -hook-runs 0 -deploy-n 20 -deploy-delays 2s -deploy-reference 20

.PHONY: generate
generate: ## generate the API's deepcopy code and CRDs from pkg/apis (controller-gen), their copies in the chart and modules/, and deploy/
	$(CONTROLLER_GEN) object paths=./pkg/apis/...
	rm -f pkg/apis/v1alpha1/crds/*.yaml modules/060-execution-hooks/crds/*.yaml charts/addon-operator/crds/*.yaml
	$(CONTROLLER_GEN) crd paths=./pkg/apis/v1alpha1/... output:crd:dir=pkg/apis/v1alpha1/crds
	$(CONTROLLER_GEN) crd paths=./pkg/apis/hooks/... output:crd:dir=modules/060-execution-hooks/crds
	cp pkg/apis/v1alpha1/crds/*.yaml charts/addon-operator/crds/
	$(GO) run ./hack/gendeploy

.PHONY: verify
verify: generate ## regenerate into the tree; fail when the generated files differ from the committed ones
	@git diff --exit-code --stat -- $(GENERATED) && test -z "$$(git ls-files --others --exclude-standard -- $(GENERATED))" || { \
		git status --short -- $(GENERATED) >&2; \
		echo "generated files are out of date: run make generate and commit the result" >&2; exit 1; }

.PHONY: deploy
deploy: ## regenerate deploy/addon-operator.yaml and deploy/crds.yaml from charts/addon-operator
	$(GO) run ./hack/gendeploy

.PHONY: check-deploy
check-deploy: ## fail when deploy/ is out of sync with charts/addon-operator
	$(GO) run ./hack/gendeploy -check

.PHONY: cluster-up
cluster-up: ## start a local control plane with controllers and a simulated node (kwok) and print the export KUBECONFIG=... line
	@$(GO) run ./e2e/cluster/cmd/localcluster up -pod-start-delay $(POD_START_DELAY) $(CLUSTER_DIR)

.PHONY: cluster-down
cluster-down: ## stop the local control plane started by cluster-up
	@$(GO) run ./e2e/cluster/cmd/localcluster down $(CLUSTER_DIR)

.PHONY: image
image: ## build the image: docker build when a Docker daemon answers, else an OCI layout in .image/oci from Debian's packages
	@if docker info >/dev/null 2>&1; then \
		docker build -t addon-operator:$(VERSION) --build-arg VERSION=$(VERSION) --build-arg COMMIT=$(COMMIT) .; \
	else \
		echo "no Docker daemon: building an OCI layout without one (docs/image.md)" >&2; \
		hack/packages/ensure.sh image && hack/image/build.sh $(IMAGE_DIR) $(VERSION) $(COMMIT); \
	fi

.PHONY: image-check
image-check: ## run the .image/oci image as its user (65532) against a local control plane until it is ready
	@hack/packages/ensure.sh image
	@eval "$$($(GO) run ./e2e/cluster/cmd/localcluster up -workloads=false $(IMAGE_DIR)/cluster)"; \
	trap '$(GO) run ./e2e/cluster/cmd/localcluster down $(IMAGE_DIR)/cluster' EXIT; \
	hack/image/check.sh $(IMAGE_DIR)/oci addon-operator:$(VERSION) addon-operator
