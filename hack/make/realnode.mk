# The real node of the local cluster: containerd, runc, CNI, kubelet,
# kube-proxy, CoreDNS and local-path-provisioner on this machine, beside
# kwok's simulated nodes. Included by the Makefile; hack/realnode/README.md
# tells how it works.
#
# make dev-cluster does, in this order:
#   $(REALNODE_DOWN)     leftovers of an earlier run, if any
#   $(REALNODE_DECIDE)   prints the kwokctl arguments the real node needs, or
#                        nothing (kwok-only: one line on stderr says why);
#                        with REALNODE=on an unavailable node fails instead
#   kwokctl create cluster ... $(REALNODE_KWOK_ARGS) $(KWOK_LOOPBACK)  (this order)
#   localcluster nodes N
#   $(REALNODE_UP)       starts the node (only when the arguments were given)
#                        and taints the simulated nodes
# and make dev-cluster-down runs $(REALNODE_DOWN) before anything else.

##@ Real node (kubelet, containerd, CNI, kube-proxy and CoreDNS beside the kwok nodes)

# auto: a real node when this machine allows it, kwok-only otherwise;
# on: a real node or fail (CI); off: kwok-only.
REALNODE ?= auto

KUBELET         := $(K8S_BIN)/kubelet
KUBE_PROXY      := $(K8S_BIN)/kube-proxy
COREDNS_VERSION := $(shell sed -n 's|^\s*require github.com/coredns/coredns \(v[0-9.]*\)$$|\1|p; s|^\s*github.com/coredns/coredns \(v[0-9.]*\)$$|\1|p' $(TOOLS_DIR)/coredns/go.mod)
COREDNS_BIN     := $(BIN)/coredns-$(COREDNS_VERSION)
COREDNS         := $(COREDNS_BIN)/coredns
COREDNS_IMAGE   := localhost/coredns:$(COREDNS_VERSION)
COREDNS_TAR     := $(COREDNS_BIN)/coredns-image.tar
# rancher's local-path-provisioner: PersistentVolumes as directories under
# the real node's state directory (StorageClass local-path, the default).
LOCALPATH_VERSION := $(shell sed -n 's|^\s*require github.com/rancher/local-path-provisioner \(v[0-9.]*\)$$|\1|p; s|^\s*github.com/rancher/local-path-provisioner \(v[0-9.]*\)$$|\1|p' $(TOOLS_DIR)/localpath/go.mod)
LOCALPATH_BIN     := $(BIN)/local-path-provisioner-$(LOCALPATH_VERSION)
LOCALPATH         := $(LOCALPATH_BIN)/local-path-provisioner
LOCALPATH_IMAGE   := localhost/local-path-provisioner:$(LOCALPATH_VERSION)
LOCALPATH_TAR     := $(LOCALPATH_BIN)/local-path-provisioner-image.tar
# A small image for the real node's tests and local-path's helper pods:
# Debian's static busybox (sh, nc, httpd, nslookup; its wget crashes), as
# user 65534.
REALNODE_BUSYBOX_IMAGE := localhost/realnode-busybox:1
REALNODE_BUSYBOX_TAR   := $(BIN)/realnode/busybox.tar
REALNODE_BINS   := $(KUBELET) $(KUBE_PROXY) $(COREDNS) $(COREDNS_TAR) $(LOCALPATH) $(LOCALPATH_TAR) $(REALNODE_BUSYBOX_TAR)

# The node's addresses. Every one of them stays on this machine: the node
# address is on lo, pods are on our bridge, whose traffic goes nowhere else,
# and Service addresses route to the bridge too.
REALNODE_NODE_NAME    := mo-realnode
REALNODE_BRIDGE       := mo-br0
REALNODE_NODE_IP      := 10.87.0.1
REALNODE_POD_CIDR     := 10.88.0.0/16
REALNODE_POD_GATEWAY  := 10.88.0.1
REALNODE_SERVICE_CIDR := 10.96.0.0/16
REALNODE_DNS_IP       := 10.96.0.10
REALNODE_NODE_LABEL   := multi-operator.dev/real-node
REALNODE_DIR          := $(CLUSTER_DIR)/realnode
REALNODE_PKI_DIR      := $(CLUSTER_DIR)/clusters/dev/pki
# The pause image and the operand images: `make images` (hack/images)
# writes them into bin/images/. The sandbox image is its PAUSE_IMAGE_TAR (else
# the first pause-*.tar there); every other tarball there is imported too.
REALNODE_IMAGES_DIR   ?= $(BIN)/images
REALNODE_PAUSE_TAR    ?= $(PAUSE_IMAGE_TAR)

# What kwokctl must start the control plane with for a real node:
# - kube-apiserver serves every address (pods reach it on the node address;
#   realnode.sh lets only lo and the bridge in), advertises the node address
#   (Endpoints reject loopback), hands out Service addresses in our range, and
#   shows kubelet a client certificate (logs, exec);
# - kwok-controller manages the simulated nodes only, not the real one.
# The serving certificate names 10.96.0.1 and the node address through
# hack/localcluster/kwokctl.yaml.
# These must come before $(KWOK_LOOPBACK) on kwokctl's command line: kwokctl
# v0.8.0 indexes its --extra-args by argument position, not by component
# (cluster.go, mutationComponentPatches), and panics unless every component's
# first --extra-args comes before any repeat. So kube-apiserver first, then
# kwok-controller, then the rest.
REALNODE_KWOK_ARGS := \
	--extra-args kube-apiserver=advertise-address=$(REALNODE_NODE_IP) \
	--extra-args kwok-controller=manage-all-nodes=false \
	--extra-args kwok-controller=manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake \
	--extra-args kube-apiserver=bind-address=0.0.0.0 \
	--extra-args kube-apiserver=service-cluster-ip-range=$(REALNODE_SERVICE_CIDR) \
	--extra-args kube-apiserver=kubelet-client-certificate=$(REALNODE_PKI_DIR)/admin.crt \
	--extra-args kube-apiserver=kubelet-client-key=$(REALNODE_PKI_DIR)/admin.key

REALNODE_SH = REALNODE_DIR=$(REALNODE_DIR) REALNODE_KUBECONFIG=$(DEV_KUBECONFIG) REGISTRY_ADDR=$(REGISTRY_ADDR) \
	REALNODE_PKI_DIR=$(REALNODE_PKI_DIR) REALNODE_KUBELET=$(KUBELET) REALNODE_KUBE_PROXY=$(KUBE_PROXY) \
	REALNODE_KUBECTL=$(KUBECTL) REALNODE_COREDNS_IMAGE=$(COREDNS_IMAGE) \
	REALNODE_LOCALPATH_IMAGE=$(LOCALPATH_IMAGE) REALNODE_BUSYBOX_IMAGE=$(REALNODE_BUSYBOX_IMAGE) \
	REALNODE_PAUSE_TAR="$(or $(REALNODE_PAUSE_TAR),$$(ls $(REALNODE_IMAGES_DIR)/pause-*.tar 2>/dev/null | head -1))" \
	REALNODE_IMAGES="$(COREDNS_TAR) $(LOCALPATH_TAR) $(REALNODE_BUSYBOX_TAR) $$(ls $(REALNODE_IMAGES_DIR)/*.tar 2>/dev/null | grep -v '/pause-[^/]*$$' | tr '\n' ' ')" \
	REALNODE_NODE_NAME=$(REALNODE_NODE_NAME) REALNODE_BRIDGE=$(REALNODE_BRIDGE) REALNODE_NODE_IP=$(REALNODE_NODE_IP) \
	REALNODE_POD_CIDR=$(REALNODE_POD_CIDR) REALNODE_POD_GATEWAY=$(REALNODE_POD_GATEWAY) \
	REALNODE_SERVICE_CIDR=$(REALNODE_SERVICE_CIDR) REALNODE_DNS_IP=$(REALNODE_DNS_IP) \
	REALNODE_NODE_LABEL=$(REALNODE_NODE_LABEL) \
	hack/realnode/realnode.sh

REALNODE_DECIDE = case "$(REALNODE)" in \
	  off) echo "Real node off (REALNODE=off): kwok nodes only." >&2 ;; \
	  *) why=$$($(REALNODE_SH) check 2>&1); st=$$?; \
	     if [ $$st = 0 ]; then echo '$(REALNODE_KWOK_ARGS)'; \
	     elif [ $$st = 3 ] && [ "$(REALNODE)" != on ]; then echo "$$why; kwok nodes only (REALNODE=on makes this an error)" >&2; \
	     else echo "$$why" >&2; exit $$st; fi ;; \
	esac
REALNODE_UP   = $(REALNODE_SH) up
REALNODE_DOWN = $(REALNODE_SH) down

# Nothing to build for a kwok-only cluster.
.PHONY: realnode-bins
realnode-bins: $(if $(filter off,$(REALNODE)),,$(REALNODE_BINS) $(REALNODE_PAUSE_TAR) images) ## Build kubelet, kube-proxy, CoreDNS and the real node's own images.

$(KUBELET):
	@echo "building kubelet $(K8S_VERSION) (first run only, about 3 min)"
	$(TOOL_BUILD) -o $@ k8s.io/kubernetes/cmd/kubelet

$(KUBE_PROXY):
	@echo "building kube-proxy $(K8S_VERSION) (first run only, about 2 min)"
	$(TOOL_BUILD) -o $@ k8s.io/kubernetes/cmd/kube-proxy

# CoreDNS without the forward plugin, from a module of its own (its
# dependencies are newer than the control plane's).
$(COREDNS):
	@echo "building CoreDNS $(COREDNS_VERSION) (first run only, about 4 min)"
	cd $(TOOLS_DIR)/coredns && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $@ .

$(COREDNS_TAR): $(COREDNS) hack/realnode/mkimage.sh
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  install -D -m 0755 $(COREDNS) $$tmp/coredns; \
	  hack/realnode/mkimage.sh $@ $(COREDNS_IMAGE) $$tmp 65532 /coredns
	@echo "image $(COREDNS_IMAGE) -> $@"

$(LOCALPATH):
	@echo "building local-path-provisioner $(LOCALPATH_VERSION) (first run only, about 2 min)"
	cd $(TOOLS_DIR)/localpath && CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-s -w" -o $@ github.com/rancher/local-path-provisioner

$(LOCALPATH_TAR): $(LOCALPATH) hack/realnode/mkimage.sh
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  install -D -m 0755 $(LOCALPATH) $$tmp/local-path-provisioner; \
	  hack/realnode/mkimage.sh $@ $(LOCALPATH_IMAGE) $$tmp 65532 /local-path-provisioner
	@echo "image $(LOCALPATH_IMAGE) -> $@"

$(REALNODE_BUSYBOX_TAR): hack/realnode/mkimage.sh
	@busybox=$$(command -v busybox) || { echo "no busybox: apt-get install busybox-static (make realnode-deps)" >&2; exit 1; }; \
	  ldd $$busybox >/dev/null 2>&1 && { echo "$$busybox is not static: apt-get install busybox-static" >&2; exit 1; }; \
	  tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  install -D -m 0755 $$busybox $$tmp/bin/busybox; \
	  for a in $$($$busybox --list); do [ "$$a" = busybox ] || ln -s busybox $$tmp/bin/$$a; done; \
	  mkdir -p $$tmp/etc $$tmp/www; install -d -m 1777 $$tmp/tmp; \
	  printf 'root:x:0:0:root:/:/bin/sh\nnobody:x:65534:65534:nobody:/:/bin/sh\n' > $$tmp/etc/passwd; \
	  printf 'root:x:0:\nnobody:x:65534:\n' > $$tmp/etc/group; \
	  hack/realnode/mkimage.sh $@ $(REALNODE_BUSYBOX_IMAGE) $$tmp 65534 /bin/sh
	@echo "image $(REALNODE_BUSYBOX_IMAGE) -> $@"

# Debian's packages the real node needs, installed when missing (as root).
REALNODE_APT := containerd runc containernetworking-plugins iptables conntrack busybox-static

.PHONY: realnode-deps
realnode-deps: ## Install the Debian packages of the real node when missing (needs root; make deps installs them too).
	@$(call apt_install,$(REALNODE_APT),real node)

.PHONY: realnode-check
realnode-check: ## Tell whether this machine can run the real node (exit 3 and one line when not).
	@$(REALNODE_SH) check && echo "This machine can run a real node."

.PHONY: realnode-up
realnode-up: $(REALNODE_BINS) $(KUBECTL) ## Start the real node (the cluster must have been created with REALNODE_KWOK_ARGS).
	@$(REALNODE_UP)

.PHONY: realnode-down
realnode-down: ## Remove the real node: processes, mounts, bridge, address, iptables chains, cgroups.
	@$(REALNODE_DOWN)

.PHONY: realnode-test
realnode-test: $(KUBECTL) ## Prove the real node: pods, pod and Service traffic, DNS, logs, exec, volumes, addresses.
	REALNODE_KUBECONFIG=$(DEV_KUBECONFIG) KUBECTL=$(KUBECTL) REALNODE_BUSYBOX_IMAGE=$(REALNODE_BUSYBOX_IMAGE) \
	  $(GO) test -tags realnode -count=1 -timeout 10m -v $(GOTEST_FLAGS) ./hack/realnode/

.PHONY: realnode-status
realnode-status: ## Show whether the real node's daemons run.
	@$(REALNODE_SH) status
