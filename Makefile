# multi-operator: one controller-manager binary hosting several operators.
# `make help` lists the targets.

SHELL := /usr/bin/env bash -o pipefail
.SHELLFLAGS := -ec

BIN        := $(CURDIR)/bin
TOOLS_DIR  := test/tools
IMG        ?= multi-operator:latest
GO         ?= go
GOTEST_FLAGS ?=

# The control plane the tests run against, built once from the Go module
# proxy (test/tools pins the versions) and reused afterwards.
K8S_VERSION := $(shell sed -n 's/^\s*k8s.io\/kubernetes \(v[0-9.]*\)$$/\1/p' $(TOOLS_DIR)/go.mod)
K8S_MINOR   := $(word 2,$(subst ., ,$(K8S_VERSION)))
VERSION_LDFLAGS := -s -w \
	$(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	  -X $(p).gitVersion=$(K8S_VERSION) -X $(p).gitMajor=1 -X $(p).gitMinor=$(K8S_MINOR))
TOOL_BUILD := cd $(TOOLS_DIR) && $(GO) build -trimpath -ldflags "$(VERSION_LDFLAGS)"

CONTROLLER_GEN := $(BIN)/controller-gen
ETCD           := $(BIN)/etcd
KUBE_APISERVER := $(BIN)/kube-apiserver
ENVTEST_BINS   := $(ETCD) $(KUBE_APISERVER)

# Controllers whose RBAC is generated, one ClusterRole each: every directory under controllers/.
CONTROLLERS := $(notdir $(patsubst %/,%,$(wildcard controllers/*/)))

export KUBEBUILDER_ASSETS := $(BIN)

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n%s\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate the deepcopy code of the API types.
	$(CONTROLLER_GEN) object paths=./apis/...

.PHONY: manifests
manifests: $(CONTROLLER_GEN) ## Generate the CRDs and one ClusterRole per controller.
	$(CONTROLLER_GEN) crd paths=./apis/... output:crd:artifacts:config=config/crd/bases
	@for c in $(CONTROLLERS); do \
	  echo "$(CONTROLLER_GEN) rbac:roleName=$$c-manager-role paths=./controllers/$$c/... output:rbac:artifacts:config=config/rbac/$$c"; \
	  $(CONTROLLER_GEN) rbac:roleName=$$c-manager-role paths=./controllers/$$c/... output:rbac:artifacts:config=config/rbac/$$c; \
	done

.PHONY: fmt
fmt: ## Format the Go code.
	gofmt -w $$(git ls-files '*.go')

.PHONY: lint
lint: ## gofmt and go vet.
	@out=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	  if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	$(GO) vet ./...

.PHONY: verify
verify: generate manifests lint ## Fail when generated files or go.mod are stale, or when gofmt or go vet complain.
	$(GO) mod tidy
	cd $(TOOLS_DIR) && $(GO) mod tidy
	@if [ -n "$$(git status --porcelain -- apis config go.mod go.sum $(TOOLS_DIR)/go.mod $(TOOLS_DIR)/go.sum)" ]; then \
	  echo "Generated files or go.mod are stale; run 'make generate manifests' and 'go mod tidy', then commit:"; \
	  git status --porcelain -- apis config go.mod go.sum $(TOOLS_DIR)/go.mod $(TOOLS_DIR)/go.sum; \
	  git --no-pager diff --stat; exit 1; fi

.PHONY: test
test: $(ENVTEST_BINS) ## Run the unit and envtest tests against a real kube-apiserver and etcd.
	$(GO) test $(GOTEST_FLAGS) ./...

##@ Build

.PHONY: build
build: ## Build the manager binary into bin/manager.
	$(GO) build -o $(BIN)/manager ./cmd/manager

.PHONY: run
run: build ## Run the manager against the current kubeconfig.
	$(BIN)/manager --leader-elect=false --metrics-bind-address=0

.PHONY: docker-build
docker-build: ## Build the container image (needs a Docker engine).
	docker build -t $(IMG) .

##@ Tools (built once into bin/ from test/tools)

$(CONTROLLER_GEN): $(TOOLS_DIR)/go.mod
	@echo "building controller-gen"
	$(TOOL_BUILD) -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(ETCD): $(TOOLS_DIR)/go.mod
	@echo "building etcd (first run only, about 1 min)"
	$(TOOL_BUILD) -o $@ ./etcd

$(KUBE_APISERVER): $(TOOLS_DIR)/go.mod
	@echo "building kube-apiserver $(K8S_VERSION) (first run only, about 5 min)"
	$(TOOL_BUILD) -o $@ k8s.io/kubernetes/cmd/kube-apiserver

.PHONY: tools
tools: $(CONTROLLER_GEN) $(ENVTEST_BINS) ## Build the code generator and the control plane.
