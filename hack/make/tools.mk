# The pinned tools: their versions (from hack/tools) and how each is built
# once into a versioned folder under bin/. Included by the Makefile.

# The control plane the tests run against, built once from the Go module
# proxy (hack/tools/go.mod pins every version) into a versioned folder under
# bin/ and reused afterwards; a version bump builds into a new folder.
tool_version = $(shell sed -n 's|^\s*$(1) \(v[0-9.]*\)$$|\1|p' $(TOOLS_DIR)/go.mod)
K8S_VERSION    := $(call tool_version,k8s.io/kubernetes)
KWOK_VERSION   := $(call tool_version,sigs.k8s.io/kwok)
CG_VERSION     := $(call tool_version,sigs.k8s.io/controller-tools)
K8S_MINOR      := $(word 2,$(subst ., ,$(K8S_VERSION)))
VERSION_LDFLAGS := -s -w \
	$(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	  -X $(p).gitVersion=$(K8S_VERSION) -X $(p).gitMajor=1 -X $(p).gitMinor=$(K8S_MINOR))
TOOL_BUILD := cd $(TOOLS_DIR) && $(GO) build -trimpath -ldflags "$(VERSION_LDFLAGS)"

K8S_BIN        := $(BIN)/k8s-$(K8S_VERSION)
KWOK_BIN       := $(BIN)/kwok-$(KWOK_VERSION)
CONTROLLER_GEN := $(BIN)/controller-gen-$(CG_VERSION)
ETCD           := $(K8S_BIN)/etcd
KUBE_APISERVER := $(K8S_BIN)/kube-apiserver
KUBECTL        := $(K8S_BIN)/kubectl
KUBE_CONTROLLER_MANAGER := $(K8S_BIN)/kube-controller-manager
KUBE_SCHEDULER := $(K8S_BIN)/kube-scheduler
KWOK           := $(KWOK_BIN)/kwok
KWOKCTL        := $(KWOK_BIN)/kwokctl
ENVTEST_BINS   := $(ETCD) $(KUBE_APISERVER)
# The oldest Kubernetes release the project supports, pinned by
# hack/tools/oldest/go.mod: only its kube-apiserver is built (beside a copy
# of the newest's etcd), for make test-oldest.
OLDEST_TOOLS_DIR    := $(TOOLS_DIR)/oldest
K8S_OLDEST_VERSION  := $(shell sed -n 's|^\(require\)\?\s*k8s.io/kubernetes \(v[0-9.]*\)$$|\2|p' $(OLDEST_TOOLS_DIR)/go.mod)
K8S_OLDEST_MINOR    := $(word 2,$(subst ., ,$(K8S_OLDEST_VERSION)))
K8S_OLDEST_BIN      := $(BIN)/k8s-$(K8S_OLDEST_VERSION)
OLDEST_ENVTEST_BINS := $(K8S_OLDEST_BIN)/kube-apiserver $(K8S_OLDEST_BIN)/etcd

# golangci-lint, pinned by hack/tools/lint/go.mod: a module of its own, so
# that the linter's dependencies stay out of the control plane's. go mod tidy
# writes its lone requirement on one line ("require path version").
LINT_TOOLS_DIR        := $(TOOLS_DIR)/lint
GOLANGCI_LINT_VERSION := $(shell sed -n 's|^\(require\)\?\s*github.com/golangci/golangci-lint/v2 \(v[0-9.]*\)$$|\2|p' $(LINT_TOOLS_DIR)/go.mod)
GOLANGCI_LINT         := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)/golangci-lint

# helm, pinned by hack/tools/helm/go.mod (a module of its own, like the
# linter's): the chart tests and the real-node e2e run it.
HELM_TOOLS_DIR := $(TOOLS_DIR)/helm
HELM_VERSION   := $(shell sed -n 's|^\(require\)\?\s*helm.sh/helm/v3 \(v[0-9.]*\)$$|\2|p' $(HELM_TOOLS_DIR)/go.mod)
HELM           := $(BIN)/helm-$(HELM_VERSION)/helm
export HELM

# kube-score, pinned by hack/tools/kubescore/go.mod (a module of its own):
# make lint-manifests runs it over every shipped manifest.
KUBESCORE_TOOLS_DIR := $(TOOLS_DIR)/kubescore
KUBE_SCORE_VERSION  := $(shell sed -n 's|^\(require\)\?\s*github.com/zegl/kube-score \(v[0-9.]*\)$$|\2|p' $(KUBESCORE_TOOLS_DIR)/go.mod)
KUBE_SCORE          := $(BIN)/kube-score-$(KUBE_SCORE_VERSION)/kube-score
export KUBE_SCORE

# redis_exporter, pinned by hack/tools/redisexporter/go.mod (a module of its
# own): the RedisCluster sidecar's binary, which the exporter tests run and the
# operand image packs.
REDIS_EXPORTER_TOOLS_DIR := $(TOOLS_DIR)/redisexporter
REDIS_EXPORTER_VERSION   := $(shell sed -n 's|^\(require\)\?\s*github.com/oliver006/redis_exporter \(v[0-9.]*\)$$|\2|p' $(REDIS_EXPORTER_TOOLS_DIR)/go.mod)
REDIS_EXPORTER           := $(BIN)/redis_exporter-$(REDIS_EXPORTER_VERSION)/redis_exporter
export REDIS_EXPORTER

# SeaweedFS, pinned by hack/tools/seaweedfs/go.mod (a module of its own, at a
# pseudo-version since the proxy serves no tagged one here): its weed binary
# is the S3-compatible store the objectstore tests and make run write to.
SEAWEEDFS_TOOLS_DIR := $(TOOLS_DIR)/seaweedfs
SEAWEEDFS_VERSION   := $(shell sed -n 's|^\(require\)\?\s*github.com/seaweedfs/seaweedfs \(v[0-9a-f.-]*\)$$|\2|p' $(SEAWEEDFS_TOOLS_DIR)/go.mod)
SEAWEEDFS           := $(BIN)/seaweedfs-$(SEAWEEDFS_VERSION)/weed
export SEAWEEDFS

##@ Tools (built once into bin/ from hack/tools)

$(GOLANGCI_LINT):
	@echo "building golangci-lint $(GOLANGCI_LINT_VERSION) (first run only, about 5 min)"
	cd $(LINT_TOOLS_DIR) && $(GO) build -trimpath -o $@ github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# As helm's own Makefile does: its version, and the Kubernetes version its
# client libraries speak, which `helm template` assumes without --kube-version.
$(HELM):
	@echo "building helm $(HELM_VERSION) (first run only, about 2 min)"
	cd $(HELM_TOOLS_DIR) && k8s=$$($(GO) list -m -f '{{.Version}}' k8s.io/client-go) && minor=$$(echo "$$k8s" | cut -d. -f2) && \
	  $(GO) build -trimpath -o $@ -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$(HELM_VERSION) \
	    $(foreach p,pkg/lint/rules pkg/chartutil,-X helm.sh/helm/v3/$(p).k8sVersionMajor=1 -X helm.sh/helm/v3/$(p).k8sVersionMinor=$$minor)" \
	    helm.sh/helm/v3/cmd/helm

# As kube-score's releases (goreleaser) stamp it: kube-score version says it.
$(KUBE_SCORE):
	@echo "building kube-score $(KUBE_SCORE_VERSION) (first run only, about 1 min)"
	cd $(KUBESCORE_TOOLS_DIR) && $(GO) build -trimpath -o $@ -ldflags "-s -w -X main.version=$(KUBE_SCORE_VERSION)" github.com/zegl/kube-score/cmd/kube-score

# Static (no cgo) so that the distroless operand image can run it; stamped as
# the exporter's own release script stamps it.
$(REDIS_EXPORTER):
	@echo "building redis_exporter $(REDIS_EXPORTER_VERSION) (first run only, about 1 min)"
	cd $(REDIS_EXPORTER_TOOLS_DIR) && CGO_ENABLED=0 $(GO) build -trimpath -o $@ \
	  -ldflags "-s -w -X main.BuildVersion=$(REDIS_EXPORTER_VERSION:v%=%) -X main.BuildCommitSha=none -X main.BuildDate=none" \
	  github.com/oliver006/redis_exporter

# Static (no cgo), stamped with its commit as SeaweedFS's own build stamps it.
# make tools builds SeaweedFS too, unless TOOLS_SEAWEEDFS is set empty: CI
# builds it apart, at low priority, while the other stages run.
TOOLS_SEAWEEDFS ?= $(SEAWEEDFS)

.PHONY: seaweedfs
seaweedfs: $(SEAWEEDFS) ## Build SeaweedFS's weed, the S3-compatible store of the backup tests.

$(SEAWEEDFS):
	@echo "building SeaweedFS $(SEAWEEDFS_VERSION) (first run only, about 7 min)"
	cd $(SEAWEEDFS_TOOLS_DIR) && CGO_ENABLED=0 $(GO) build -trimpath -o $@ \
	  -ldflags "-s -w -X github.com/seaweedfs/seaweedfs/weed/util/version.COMMIT=$(lastword $(subst -, ,$(SEAWEEDFS_VERSION)))" \
	  github.com/seaweedfs/seaweedfs/weed

$(CONTROLLER_GEN):
	@echo "building controller-gen $(CG_VERSION)"
	$(TOOL_BUILD) -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

$(ETCD):
	@echo "building etcd (first run only, about 1 min)"
	$(TOOL_BUILD) -o $@ ./etcd

$(KUBE_APISERVER):
	@echo "building kube-apiserver $(K8S_VERSION) (first run only, about 5 min)"
	$(TOOL_BUILD) -o $@ k8s.io/kubernetes/cmd/kube-apiserver

.PHONY: oldest-tools
oldest-tools: $(OLDEST_ENVTEST_BINS) ## Build the oldest supported kube-apiserver and its etcd, which make test-oldest uses.

$(K8S_OLDEST_BIN)/kube-apiserver:
	@echo "building kube-apiserver $(K8S_OLDEST_VERSION), the oldest supported (first run only, about 5 min)"
	@mkdir -p $(@D)
	cd $(OLDEST_TOOLS_DIR) && $(GO) build -trimpath -o $@ -ldflags "-s -w \
	  $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	    -X $(p).gitVersion=$(K8S_OLDEST_VERSION) -X $(p).gitMajor=1 -X $(p).gitMinor=$(K8S_OLDEST_MINOR))" \
	  k8s.io/kubernetes/cmd/kube-apiserver

$(K8S_OLDEST_BIN)/etcd: $(ETCD)
	@mkdir -p $(@D)
	cp $(ETCD) $@

$(KUBECTL):
	@echo "building kubectl $(K8S_VERSION) (first run only, about 2 min)"
	$(TOOL_BUILD) -o $@ k8s.io/kubernetes/cmd/kubectl

$(KUBE_CONTROLLER_MANAGER):
	@echo "building kube-controller-manager $(K8S_VERSION) (first run only, about 4 min)"
	$(TOOL_BUILD) -o $@ k8s.io/kubernetes/cmd/kube-controller-manager

$(KUBE_SCHEDULER):
	@echo "building kube-scheduler $(K8S_VERSION) (first run only, about 2 min)"
	$(TOOL_BUILD) -o $@ k8s.io/kubernetes/cmd/kube-scheduler

$(KWOK):
	@echo "building kwok $(KWOK_VERSION) (first run only, about 2 min)"
	$(TOOL_BUILD) -o $@ sigs.k8s.io/kwok/cmd/kwok

$(KWOKCTL):
	@echo "building kwokctl $(KWOK_VERSION) (first run only, about 1 min)"
	$(TOOL_BUILD) -o $@ sigs.k8s.io/kwok/cmd/kwokctl

.PHONY: tools
tools: $(CONTROLLER_GEN) $(GOLANGCI_LINT) $(HELM) $(KUBE_SCORE) $(REDIS_EXPORTER) $(TOOLS_SEAWEEDFS) $(ENVTEST_BINS) $(KUBECTL) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KWOK) $(KWOKCTL) ## Build the code generator, the linters, helm, redis_exporter, SeaweedFS, the control plane and kwok.
