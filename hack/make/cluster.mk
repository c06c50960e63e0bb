# The local cluster: a real control plane with kwok's simulated nodes, and the
# real node of realnode.mk beside them. Included by the Makefile.

##@ Local cluster (kwok: a real control plane with simulated nodes)

CLUSTER_DIR    := $(CURDIR)/.cluster
DEV_KUBECONFIG := $(CLUSTER_DIR)/kubeconfig
DEV_NODES      ?= 3
KWOKCTL_RUN    := KWOK_WORKDIR=$(CLUSTER_DIR) $(KWOKCTL) --name dev
CLUSTER_BINS   := $(ETCD) $(KUBE_APISERVER) $(KUBE_CONTROLLER_MANAGER) $(KUBE_SCHEDULER) $(KWOK) $(KWOKCTL) $(KUBECTL)
# Every address of the local cluster stays on this machine: every component
# listens on loopback; kwok-controller serves the simulated nodes' kubelet
# API on 127.0.0.1, which is their InternalIP and the address the API server
# dials (never a node name, which would be a DNS lookup off the machine);
# pods without a node range get loopback addresses too. The API server runs
# OwnerReferencesPermissionEnforcement, as OpenShift does: a controller that
# may not update its kind's finalizers cannot create children that block
# their owner's deletion.
# The nodes themselves come from hack/localcluster/cmd/localcluster, with pod ranges in
# 198.18.0.0/15, which it routes to lo as local addresses, as 127.0.0.0/8 is
# (kwokctl's `scale node` would use 192.0.2.0/24 and 10.0.0.0/16, which route
# off the machine). Endpoints accept these addresses, unlike loopback ones,
# so a Service over simulated pods costs what it would on a real cluster.
# Without root it falls back to 127.64.0.0/10.
# kwokctl v0.8.0 indexes --extra-args by position and panics unless every
# component's first one comes before any component's second: one of each
# first (kube-apiserver, kwok-controller), then the rest.
KWOK_LOOPBACK  := --config hack/localcluster/kwokctl.yaml \
	--extra-args kube-apiserver=kubelet-preferred-address-types=InternalIP \
	--extra-args kwok-controller=node-ip=127.0.0.1 \
	--extra-args kwok-controller=cidr=127.63.0.0/24 \
	--extra-args kube-apiserver=enable-admission-plugins=OwnerReferencesPermissionEnforcement
LOCALCLUSTER   := $(BIN)/localcluster

# config/local (make run, make install, make uninstall) points TDSet's
# webhooks at https://localhost:9443, which breaks every TDSet of a cluster
# other than the local one: the three targets refuse such a cluster unless
# LOCAL_WEBHOOKS=yes. local_cluster_guard fails with one line unless the
# current kubeconfig reaches the local cluster, for the target $(1) that
# would do $(2) (no commas) to it.
LOCAL_WEBHOOKS ?=
local_cluster_guard = LOCAL_WEBHOOKS='$(LOCAL_WEBHOOKS)' $(CURDIR)/hack/local-cluster-guard.sh '$(KUBECTL)' '$(DEV_KUBECONFIG)' '$(1)' '$(2)'

# The local cluster's helper is the project's own code: go build keeps it current.
.PHONY: $(LOCALCLUSTER)
$(LOCALCLUSTER):
	$(GO) build -o $@ ./hack/localcluster/cmd/localcluster

.PHONY: dev-cluster
dev-cluster: $(CLUSTER_BINS) $(LOCALCLUSTER) ## Start a local cluster (state and kubeconfig under .cluster/), with a real node when this machine allows (REALNODE=auto|on|off).
	@if KUBECONFIG=$(DEV_KUBECONFIG) timeout 5 $(KUBECTL) get --raw=/readyz >/dev/null 2>&1; then \
	  echo "The local cluster is already up."; \
	else \
	  $(REALNODE_DOWN) >/dev/null 2>&1 || true; \
	  $(KWOKCTL_RUN) delete cluster >/dev/null 2>&1 || true; \
	  realnode_args=$$($(REALNODE_DECIDE)) || exit $$?; \
	  if [ -n "$$realnode_args" ]; then $(MAKE) --no-print-directory realnode-bins; fi; \
	  echo "Starting the local cluster (etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kwok$${realnode_args:+, and a real node})"; \
	  $(KWOKCTL_RUN) create cluster --runtime binary --wait 2m --kubeconfig $(DEV_KUBECONFIG) \
	    --etcd-binary $(ETCD) --kube-apiserver-binary $(KUBE_APISERVER) \
	    --kube-controller-manager-binary $(KUBE_CONTROLLER_MANAGER) --kube-scheduler-binary $(KUBE_SCHEDULER) \
	    --kwok-controller-binary $(KWOK) $$realnode_args $(KWOK_LOOPBACK) >$(CLUSTER_DIR).log 2>&1 || { cat $(CLUSTER_DIR).log; exit 1; }; \
	  $(LOCALCLUSTER) -kubeconfig $(DEV_KUBECONFIG) nodes $(DEV_NODES); \
	  if [ -n "$$realnode_args" ]; then $(MAKE) --no-print-directory registry-up && $(REALNODE_UP); fi; \
	fi
	@echo "Point kubectl at it with: export KUBECONFIG=$(DEV_KUBECONFIG)"

.PHONY: dev-cluster-down
dev-cluster-down: ## Stop the local cluster, its real node included, and remove its state.
	@hack/devstore/devstore.sh down $(STORE_DIR)
	@$(REALNODE_DOWN)
	@$(MAKE) --no-print-directory registry-down
	@if [ -x $(KWOKCTL) ]; then $(KWOKCTL_RUN) delete cluster >/dev/null 2>&1 || true; fi
	@if [ -x $(LOCALCLUSTER) ]; then $(LOCALCLUSTER) unroute || true; fi
	rm -rf $(CLUSTER_DIR) $(CLUSTER_DIR).log

# The backup store of the local cluster: its data, logs, pid and the
# credentials Secret to apply, under the cluster's state.
STORE_DIR := $(CLUSTER_DIR)/store

.PHONY: dev-store
dev-store: $(SEAWEEDFS) ## Start an S3-compatible store (SeaweedFS) for RedisCluster backups: on the real node's address when the local cluster has one (pods reach it), else on loopback; make run BACKUP_STORE=on starts it too.
	@ip=127.0.0.1; \
	if KUBECONFIG=$(DEV_KUBECONFIG) timeout 10 $(KUBECTL) get node -l $(REALNODE_NODE_LABEL) -o name 2>/dev/null | grep -q .; then ip=$(REALNODE_NODE_IP); fi; \
	hack/devstore/devstore.sh up $(STORE_DIR) $(SEAWEEDFS) $$ip

.PHONY: dev-store-down
dev-store-down: ## Stop the backup store of make dev-store and remove its data.
	@hack/devstore/devstore.sh down $(STORE_DIR)
