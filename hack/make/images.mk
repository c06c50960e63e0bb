# Container images without a Docker engine or a base image from a registry
# (package hack/images, command hack/images/cmd/imagebuild): single-layer images
# of this machine's files, written as docker-archive tarballs under
# bin/images/ for `ctr -n k8s.io images import`. Included by the Makefile.
#
# Other makefiles use the names and the tarballs:
#   MANAGER_IMAGE_LOCAL   MANAGER_IMAGE_TAR    the manager (make image), this machine's platform
#   MANAGER_IMAGE_INDEX   its index for linux/amd64 and linux/arm64, an OCI
#                         image layout folder (make image)
#   REDIS_IMAGE_LOCAL     REDIS_IMAGE_TAR      redis-server and redis-cli (make images)
#   REDIS_EXPORTER_IMAGE_LOCAL REDIS_EXPORTER_IMAGE_TAR  redis_exporter, the
#                         RedisCluster sidecar (make images)
#   MEMCACHED_IMAGE_LOCAL MEMCACHED_IMAGE_TAR  memcached      (make images)
#   WHALESAY_IMAGE_LOCAL  WHALESAY_IMAGE_TAR   cowsay         (make images)
#   PAUSE_IMAGE_LOCAL     PAUSE_IMAGE_TAR      the pod sandbox (make images)
#   OPERAND_IMAGE_TARS    the five tarballs above, for ctr images import
#   HELLO_WORLD_IMAGE     HELLO_WORLD_IMAGE_TAR busybox httpd, the stand-in for
#                         the TDSet sample's crccheck/hello-world (make images),
#                         served by the registry, not imported
#   REGISTRY_ADDR         the loopback registry containerd uses as docker.io's
#                         mirror (make registry-up / registry-down)
#
# The TDSet sample names crccheck/hello-world with no tag, so the kubelet
# always pulls it: containerd's mirror of docker.io is then a registry on
# this machine's loopback (imagebuild registry, in memory), which serves
# HELLO_WORLD_IMAGE_TAR as /v2/crccheck/hello-world/manifests/latest. The
# containerd 1.6 setting, with config_path = "<dir>" in its CRI registry
# section, is <dir>/docker.io/hosts.toml:
#   server = "http://127.0.0.1:5000"
#   [host."http://127.0.0.1:5000"]
#     capabilities = ["pull", "resolve"]
# (both lines: with server alone containerd 1.6 still goes to Docker Hub).
#
# The operands come from Debian's packages (make images-deps installs them)
# and are named after the package's version, so each is built once and
# reused; they are rebuilt when imagebuild's code changes. The manager is
# named after the commit (-dirty with local changes), rebuilt when its
# binary changes, and only the current one is kept.

IMAGES_DIR := $(BIN)/images
IMAGEBUILD := $(BIN)/imagebuild
# The Debian packages the images are built from.
IMAGES_DEBS := redis-server redis-tools memcached cowsay perl ca-certificates gcc libc6-dev busybox-static

# deb_version is the version of the installed Debian package $(1), empty when
# it is not installed; deb_tag makes an image tag of it: no epoch, and ~ or +
# (which a tag may not hold) as _, so 5:7.0.15-1~deb12u10 is 7.0.15-1_deb12u10.
deb_version = $(shell dpkg-query -W -f='$${db:Status-Abbrev}$${Version}' $(1) 2>/dev/null | sed -n 's/^ii *//p')
deb_tag = $(or $(shell printf '%s' '$(1)' | sed -e 's/^[0-9]*://' -e 's/[^A-Za-z0-9_.-]/_/g'),not-installed)

# The manager: its version is the commit, and the files' time the commit's,
# so two builds of one commit give the same digest.
ifeq ($(origin MANAGER_VERSION),undefined)
MANAGER_VERSION := $(shell v=$$(git rev-parse --short HEAD 2>/dev/null) || { echo dev; exit; }; \
	git diff-index --quiet HEAD -- 2>/dev/null || v=$$v-dirty; echo $$v)
endif
ifeq ($(origin MANAGER_EPOCH),undefined)
MANAGER_EPOCH := $(or $(SOURCE_DATE_EPOCH),$(shell git log -1 --format=%ct 2>/dev/null),0)
endif
# The platforms of the manager's published index; the real node imports
# the image of this machine's (MANAGER_IMAGE_TAR).
MANAGER_PLATFORMS   := amd64 arm64
HOST_GOARCH         := $(shell $(GO) env GOARCH)
MANAGER_IMAGE_BINS  := $(foreach arch,$(MANAGER_PLATFORMS),$(IMAGES_DIR)/manager-linux-$(arch))
MANAGER_IMAGE_BIN   := $(IMAGES_DIR)/manager-linux-$(HOST_GOARCH)
MANAGER_IMAGE_LOCAL := localhost/multi-operator:$(MANAGER_VERSION)
MANAGER_IMAGE_TAR   := $(IMAGES_DIR)/multi-operator-$(MANAGER_VERSION).tar
# The index, as an OCI image layout folder (skopeo copy oci:DIR, crane push).
MANAGER_IMAGE_INDEX := $(IMAGES_DIR)/multi-operator-$(MANAGER_VERSION)-index

# The operands' files keep time zero: their digest depends on the packages alone.
OPERAND_EPOCH ?= $(or $(SOURCE_DATE_EPOCH),0)
REDIS_DEB_VERSION     := $(call deb_version,redis-server)
# redis-cli comes from redis-tools, which redis-server depends on, of the same version.
REDIS_TOOLS_DEB_VERSION := $(call deb_version,redis-tools)
MEMCACHED_DEB_VERSION := $(call deb_version,memcached)
COWSAY_DEB_VERSION    := $(call deb_version,cowsay)
REDIS_IMAGE_VERSION     := $(call deb_tag,$(REDIS_DEB_VERSION))
MEMCACHED_IMAGE_VERSION := $(call deb_tag,$(MEMCACHED_DEB_VERSION))
WHALESAY_IMAGE_VERSION  := $(call deb_tag,$(COWSAY_DEB_VERSION))
# pause's version is the VERSION of its source.
PAUSE_SRC           := hack/images/pause/pause.c
PAUSE_IMAGE_VERSION := $(shell sed -n 's/^\#define VERSION "\(.*\)"/\1/p' $(PAUSE_SRC))

REDIS_IMAGE_LOCAL     := localhost/redis:$(REDIS_IMAGE_VERSION)
REDIS_IMAGE_TAR       := $(IMAGES_DIR)/redis-$(REDIS_IMAGE_VERSION).tar
MEMCACHED_IMAGE_LOCAL := localhost/memcached:$(MEMCACHED_IMAGE_VERSION)
MEMCACHED_IMAGE_TAR   := $(IMAGES_DIR)/memcached-$(MEMCACHED_IMAGE_VERSION).tar
WHALESAY_IMAGE_LOCAL  := localhost/whalesay:$(WHALESAY_IMAGE_VERSION)
WHALESAY_IMAGE_TAR    := $(IMAGES_DIR)/whalesay-$(WHALESAY_IMAGE_VERSION).tar
# redis_exporter's version is the one hack/tools/redisexporter pins.
REDIS_EXPORTER_IMAGE_LOCAL := localhost/redis-exporter:$(REDIS_EXPORTER_VERSION)
REDIS_EXPORTER_IMAGE_TAR   := $(IMAGES_DIR)/redis-exporter-$(REDIS_EXPORTER_VERSION).tar
PAUSE_IMAGE_LOCAL     := localhost/pause:$(PAUSE_IMAGE_VERSION)
PAUSE_IMAGE_TAR       := $(IMAGES_DIR)/pause-$(PAUSE_IMAGE_VERSION).tar
OPERAND_IMAGE_TARS    := $(REDIS_IMAGE_TAR) $(REDIS_EXPORTER_IMAGE_TAR) $(MEMCACHED_IMAGE_TAR) $(WHALESAY_IMAGE_TAR) $(PAUSE_IMAGE_TAR)

# The stand-in for crccheck/hello-world, named as docker.io's mirror serves
# it, and its tarball named after Debian's busybox-static.
BUSYBOX_DEB_VERSION       := $(call deb_version,busybox-static)
HELLO_WORLD_IMAGE_VERSION := $(call deb_tag,$(BUSYBOX_DEB_VERSION))
HELLO_WORLD_IMAGE         := docker.io/crccheck/hello-world:latest
HELLO_WORLD_IMAGE_TAR     := $(IMAGES_DIR)/hello-world-$(HELLO_WORLD_IMAGE_VERSION).tar

# The registry: its address (loopback only: imagebuild refuses any other),
# the folder of its pid file and log, and the tarballs it serves.
REGISTRY_ADDR       ?= 127.0.0.1:5000
REGISTRY_DIR        ?= $(CLUSTER_DIR)/registry
REGISTRY_PID        := $(REGISTRY_DIR)/registry.pid
REGISTRY_LOG        := $(REGISTRY_DIR)/registry.log
REGISTRY_IMAGE_TARS ?= $(HELLO_WORLD_IMAGE_TAR)

# require_deb stops with what to install when the Debian package $(1) is missing.
require_deb = if [ -z '$(2)' ]; then echo "The Debian package $(1) is not installed: apt-get install $(1) (or make images-deps)" >&2; exit 1; fi

##@ Images (no Docker engine: single-layer images of this machine's files)

.PHONY: image
image: $(MANAGER_IMAGE_TAR) $(MANAGER_IMAGE_INDEX)/index.json ## Build the manager's image (localhost/multi-operator:<commit>): its index for linux/amd64 and linux/arm64, and this machine's tarball.
	@echo "$(MANAGER_IMAGE_LOCAL): $(MANAGER_IMAGE_TAR)"
	@echo "$(MANAGER_IMAGE_LOCAL) ($(MANAGER_PLATFORMS)): $(MANAGER_IMAGE_INDEX)"

.PHONY: images
images: $(OPERAND_IMAGE_TARS) $(HELLO_WORLD_IMAGE_TAR) ## Build the redis, redis-exporter, memcached, whalesay, pause and hello-world images from Debian's packages.
	@printf '%s\n' "$(REDIS_IMAGE_LOCAL): $(REDIS_IMAGE_TAR)" "$(REDIS_EXPORTER_IMAGE_LOCAL): $(REDIS_EXPORTER_IMAGE_TAR)" "$(MEMCACHED_IMAGE_LOCAL): $(MEMCACHED_IMAGE_TAR)" \
	  "$(WHALESAY_IMAGE_LOCAL): $(WHALESAY_IMAGE_TAR)" "$(PAUSE_IMAGE_LOCAL): $(PAUSE_IMAGE_TAR)" \
	  "$(HELLO_WORLD_IMAGE): $(HELLO_WORLD_IMAGE_TAR)"

.PHONY: images-deps
images-deps: ## Install the Debian packages the images are built from when missing (needs root; make deps installs them too).
	@$(call apt_install,$(IMAGES_DEBS),images)

# registry_alive tells whether the process $$1 runs (a zombie does not).
# registry_answers tells whether REGISTRY_ADDR answers GET /v2/ with 200,
# through bash's /dev/tcp (the Makefile's shell), so curl is not needed.
# registry_stop stops the registry of $(REGISTRY_PID) with SIGTERM, if that
# pid is a running imagebuild registry, waits up to 10 s for it to go (then
# kills it), and removes the pid file.
REGISTRY_PORT := $(lastword $(subst :, ,$(REGISTRY_ADDR)))
REGISTRY_HOST := $(patsubst [%],%,$(patsubst %:$(REGISTRY_PORT),%,$(REGISTRY_ADDR)))
registry_alive = st=$$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$(1)/status 2>/dev/null || true); [ -n "$$st" ] && [ "$$st" != Z ]
registry_answers = ( exec 3<>'/dev/tcp/$(REGISTRY_HOST)/$(REGISTRY_PORT)' && printf 'GET /v2/ HTTP/1.0\r\n\r\n' >&3 && \
	  head -n1 <&3 | grep -q '^HTTP/1\.[01] 200 ' ) 2>/dev/null
registry_stop = pid=$$(cat '$(REGISTRY_PID)' 2>/dev/null || true); \
	if [ -n "$$pid" ] && tr '\0' ' ' </proc/$$pid/cmdline 2>/dev/null | grep -q 'imagebuild registry'; then \
	  kill -TERM "$$pid" 2>/dev/null || true; \
	  for i in $$(seq 100); do if ! { $(call registry_alive,$$pid); }; then break; fi; sleep 0.1; done; \
	  if { $(call registry_alive,$$pid); }; then echo "registry (pid $$pid) ignored SIGTERM: killed" >&2; kill -KILL "$$pid" 2>/dev/null || true; fi; \
	  echo "registry (pid $$pid) stopped"; \
	fi; \
	rm -f '$(REGISTRY_PID)'

.PHONY: registry-up
registry-up: $(REGISTRY_IMAGE_TARS) $(IMAGEBUILD) ## Start (or restart) the loopback registry that containerd uses as docker.io's mirror, at REGISTRY_ADDR.
	@mkdir -p '$(REGISTRY_DIR)'; $(registry_stop); \
	setsid $(IMAGEBUILD) registry -addr '$(REGISTRY_ADDR)' -pidfile '$(REGISTRY_PID)' $(REGISTRY_IMAGE_TARS) \
	  >'$(REGISTRY_LOG)' 2>&1 </dev/null & pid=$$!; \
	for i in $$(seq 100); do \
	  if ! { $(call registry_alive,$$pid); }; then cat '$(REGISTRY_LOG)' >&2; echo "the registry did not start" >&2; exit 1; fi; \
	  if [ "$$(cat '$(REGISTRY_PID)' 2>/dev/null || true)" = "$$pid" ] && $(registry_answers); then \
	    grep -m1 '^registry ready' '$(REGISTRY_LOG)' || true; exit 0; \
	  fi; \
	  sleep 0.1; \
	done; \
	echo "the registry (pid $$pid) does not answer http://$(REGISTRY_ADDR)/v2/ after 10 s: see $(REGISTRY_LOG)" >&2; exit 1

.PHONY: registry-down
registry-down: ## Stop the loopback registry of registry-up, if it runs.
	@$(registry_stop)

.PHONY: images-clean
images-clean: ## Remove the built images and their binaries (bin/images).
	rm -rf $(IMAGES_DIR)

# images-always makes its dependents run their recipe every time; those
# replace their file only when its bytes change, so what depends on them is
# rebuilt only then.
.PHONY: images-always
images-always:

# The builder is the project's own code: go build keeps it current.
$(IMAGEBUILD): images-always
	@$(GO) build -buildvcs=false -o $@.new ./hack/images/cmd/imagebuild
	@if cmp -s $@.new $@; then rm -f $@.new; else mv -f $@.new $@; fi

# The manager's static binary for each platform, built as the Dockerfile
# builds it.
$(IMAGES_DIR)/manager-linux-%: images-always | $(IMAGEBUILD)
	@$(IMAGEBUILD) build-manager -go $(GO) -arch $* -o $@

# Only the current manager tarball is kept: the ones of earlier commits go.
$(MANAGER_IMAGE_TAR): $(MANAGER_IMAGE_BIN) $(IMAGEBUILD)
	@$(IMAGEBUILD) manager -name $(MANAGER_IMAGE_LOCAL) -out $@ -binary $(MANAGER_IMAGE_BIN) -epoch $(MANAGER_EPOCH)
	@for f in $(IMAGES_DIR)/multi-operator-*.tar; do [ "$$f" = '$@' ] || rm -f "$$f"; done

# The index of every platform's image; the same commit gives the same digest.
$(MANAGER_IMAGE_INDEX)/index.json: $(MANAGER_IMAGE_BINS) $(IMAGEBUILD)
	@$(IMAGEBUILD) manager-index -name $(MANAGER_IMAGE_LOCAL) -out $(MANAGER_IMAGE_INDEX) -epoch $(MANAGER_EPOCH) $(MANAGER_IMAGE_BINS)
	@for d in $(IMAGES_DIR)/multi-operator-*-index; do [ "$$d" = '$(MANAGER_IMAGE_INDEX)' ] || rm -rf "$$d"; done

$(REDIS_IMAGE_TAR): $(IMAGEBUILD)
	@$(call require_deb,redis-server,$(REDIS_DEB_VERSION))
	@$(call require_deb,redis-tools,$(REDIS_TOOLS_DEB_VERSION))
	@$(IMAGEBUILD) redis -name $(REDIS_IMAGE_LOCAL) -out $@ -epoch $(OPERAND_EPOCH)

# Built once from the pinned binary; a version bump names a new tarball.
$(REDIS_EXPORTER_IMAGE_TAR): $(REDIS_EXPORTER) $(IMAGEBUILD)
	@$(IMAGEBUILD) redis-exporter -name $(REDIS_EXPORTER_IMAGE_LOCAL) -out $@ -binary $(REDIS_EXPORTER) -epoch $(OPERAND_EPOCH)

$(MEMCACHED_IMAGE_TAR): $(IMAGEBUILD)
	@$(call require_deb,memcached,$(MEMCACHED_DEB_VERSION))
	@$(IMAGEBUILD) memcached -name $(MEMCACHED_IMAGE_LOCAL) -out $@ -epoch $(OPERAND_EPOCH)

$(WHALESAY_IMAGE_TAR): $(IMAGEBUILD)
	@$(call require_deb,cowsay,$(COWSAY_DEB_VERSION))
	@$(IMAGEBUILD) whalesay -name $(WHALESAY_IMAGE_LOCAL) -out $@ -epoch $(OPERAND_EPOCH)

# make release writes the operand images of ours with the rest of the
# release, as OCI layouts whose digests a registry keeps.
.PHONY: release-images
release-images: release ## Write the release (make release), with the images it publishes under their release names in bin/release-v<VERSION>/images/.

$(HELLO_WORLD_IMAGE_TAR): $(IMAGEBUILD)
	@$(call require_deb,busybox-static,$(BUSYBOX_DEB_VERSION))
	@$(IMAGEBUILD) hello-world -name $(HELLO_WORLD_IMAGE) -out $@ -epoch $(OPERAND_EPOCH)

$(PAUSE_IMAGE_TAR): $(PAUSE_SRC) $(IMAGEBUILD)
	@command -v gcc >/dev/null || { echo "gcc is missing: apt-get install gcc libc6-dev (or make images-deps)" >&2; exit 1; }
	@$(IMAGEBUILD) pause -name $(PAUSE_IMAGE_LOCAL) -out $@ -src $(PAUSE_SRC) -epoch $(OPERAND_EPOCH)
