# Deploying the overlays, the chart and the installers, to any cluster or to
# the local one. Included by the Makefile.

# Deploying: which overlay of config/overlays (or "default"), and the image.
OVERLAY ?= default
OVERLAY_DIR = $(if $(filter default,$(OVERLAY)),config/default,config/overlays/$(OVERLAY))
OVERLAYS := $(notdir $(wildcard config/overlays/*)) default

##@ Deployment

# The manager image's name in config/manager (the release's repository,
# tagged v$(VERSION) there), which IMG and the local image replace; the
# same as hack/release/overlay.ImageName.
CONFIG_MANAGER_IMAGE := ghcr.io/multi-operator/multi-operator

# image_kustomization writes into $$tmp a kustomization of $(1) that sets
# the manager image to $(2):$(3), followed by the kustomization fields $(4)
# when given (printf's %b: \n is a new line). The tag is quoted, since YAML
# reads a tag of digits only, such as a commit's short hash, as a number.
define image_kustomization
printf 'resources:\n- %s\nimages:\n- name: %s\n  newName: %s\n  newTag: "%s"\n%b' \
  "$$(realpath --relative-to="$$tmp" "$(CURDIR)/$(1)")" "$(CONFIG_MANAGER_IMAGE)" "$(2)" "$(3)" '$(4)' > "$$tmp/kustomization.yaml"
endef

# kustomize_image prints $(1) with the manager image set to $(IMG), so that
# deploying never edits tracked files.
define kustomize_image
tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
img='$(IMG)'; name=$${img%:*}; tag=$${img##*:}; \
if [[ "$$img" != *:* || "$$tag" == */* ]]; then name=$$img; tag=latest; fi; \
$(call image_kustomization,$(1),$$name,$$tag); \
$(KUBECTL) kustomize "$$tmp"
endef

.PHONY: install
install: manifests $(KUBECTL) ## Install every CRD, with the webhooks pointed at a local manager (make run), into the local cluster (another one: LOCAL_WEBHOOKS=yes).
	@$(call local_cluster_guard,make install,point its TDSet webhooks at https://localhost:9443)
	$(KUBECTL) apply --server-side -k config/local
	hack/wait-crds-established.sh 60 $(KUBECTL)

.PHONY: uninstall
uninstall: manifests $(KUBECTL) ## Remove every CRD (and so every custom resource) from the local cluster (another one: LOCAL_WEBHOOKS=yes).
	@$(call local_cluster_guard,make uninstall,delete every CRD of this project and so every custom resource)
	$(KUBECTL) delete --ignore-not-found -k config/local

# After an upgrade from a release that stored TDSets in v1, with the new CRDs
# applied and the manager (the conversion webhook) running; safe to re-run.
# ARGS passes flags, such as ARGS="--kubeconfig FILE" or more --crd names.
.PHONY: migrate-storage
migrate-storage: ## Rewrite every TDSet in the storage version (v2) and trim the CRD's storedVersions, after an upgrade from a release that stored v1.
	$(GO) build -o $(BIN)/migrate-storage ./cmd/migrate-storage
	$(BIN)/migrate-storage $(ARGS)

.PHONY: deploy
deploy: manifests $(KUBECTL) ## Deploy OVERLAY (default: all controllers) with image IMG.
	@{ $(call kustomize_image,$(OVERLAY_DIR)); } | $(KUBECTL) apply --server-side -f -

# local_kustomization writes into $$tmp a kustomization of $(1) with the
# local manager image and the local operand images (hack/realnode/deploy-local.yaml).
define local_kustomization
sed -e 's|@REDIS_IMAGE@|$(REDIS_IMAGE_LOCAL)|' -e 's|@REDIS_EXPORTER_IMAGE@|$(REDIS_EXPORTER_IMAGE_LOCAL)|' -e 's|@MEMCACHED_IMAGE@|$(MEMCACHED_IMAGE_LOCAL)|' \
  -e 's|@WHALESAY_IMAGE@|$(WHALESAY_IMAGE_LOCAL)|' \
  hack/realnode/deploy-local.yaml > "$$tmp/local-images.yaml"; \
$(call image_kustomization,$(1),$${MANAGER_IMAGE_LOCAL%:*},$(MANAGER_VERSION),patches:\n- path: local-images.yaml\n)
endef

.PHONY: deploy-local
deploy-local: manifests image dev-cluster ## Deploy OVERLAY to the local cluster's real node from the local image (make image), with the local operand images.
	@$(REALNODE_SH) import $(MANAGER_IMAGE_TAR)
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; MANAGER_IMAGE_LOCAL=$(MANAGER_IMAGE_LOCAL); \
	  $(call local_kustomization,$(OVERLAY_DIR)); \
	  KUBECONFIG=$(DEV_KUBECONFIG) $(KUBECTL) apply --server-side -k "$$tmp"
	KUBECONFIG=$(DEV_KUBECONFIG) $(KUBECTL) rollout status -n multi-operator-system deployment/multi-operator-controller-manager --timeout=120s

# The chart's release on the local cluster (make helm-deploy-local).
HELM_RELEASE   ?= multi-operator
HELM_NAMESPACE ?= multi-operator-system
HELM_ARGS      ?=

.PHONY: helm-deploy-local
helm-deploy-local: image dev-cluster $(HELM) ## Install or upgrade dist/chart on the local cluster's real node from the local images; HELM_ARGS adds flags, e.g. --set controllers.tdset.enabled=false.
	@$(REALNODE_SH) import $(MANAGER_IMAGE_TAR)
	@# The namespace enforces the restricted Pod Security Standard, as the overlays' does.
	KUBECONFIG=$(DEV_KUBECONFIG) $(KUBECTL) create namespace $(HELM_NAMESPACE) --dry-run=client -o yaml | \
	  KUBECONFIG=$(DEV_KUBECONFIG) $(KUBECTL) label --local -f - -o yaml pod-security.kubernetes.io/enforce=restricted | \
	  KUBECONFIG=$(DEV_KUBECONFIG) $(KUBECTL) apply --server-side -f -
	MANAGER_IMAGE_LOCAL=$(MANAGER_IMAGE_LOCAL); KUBECONFIG=$(DEV_KUBECONFIG) $(HELM) upgrade --install $(HELM_RELEASE) dist/chart \
	  --namespace $(HELM_NAMESPACE) --take-ownership --wait --timeout 3m \
	  --set image.repository=$${MANAGER_IMAGE_LOCAL%:*} --set-string image.tag=$(MANAGER_VERSION) \
	  --set controllers.memcached.image=$(MEMCACHED_IMAGE_LOCAL) --set controllers.rediscluster.image=$(REDIS_IMAGE_LOCAL) \
	  --set controllers.rediscluster.exporterImage=$(REDIS_EXPORTER_IMAGE_LOCAL) \
	  --set controllers.whalesay.image=$(WHALESAY_IMAGE_LOCAL) $(HELM_ARGS)

.PHONY: undeploy
undeploy: $(KUBECTL) ## Remove what OVERLAY deployed.
	$(KUBECTL) delete --ignore-not-found -k $(OVERLAY_DIR)

INSTALLER_DIR ?= dist

.PHONY: build-installer
build-installer: manifests installers ## Write dist/install-<overlay>.yaml for every overlay, with image IMG.

# installers is build-installer without regenerating the manifests first
# (test/deploy checks its output against the overlays).
.PHONY: installers
installers: $(KUBECTL)
	@mkdir -p $(INSTALLER_DIR)
	@for o in $(OVERLAYS); do \
	  dir=$$([ $$o = default ] && echo config/default || echo config/overlays/$$o); \
	  $(MAKE) -s --no-print-directory kustomize-image DIR=$$dir > $(INSTALLER_DIR)/install-$$o.yaml; \
	  echo "$(INSTALLER_DIR)/install-$$o.yaml"; \
	done

.PHONY: kustomize-image
kustomize-image:
	@$(call kustomize_image,$(DIR))
