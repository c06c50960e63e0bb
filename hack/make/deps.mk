# The Debian packages the project's commands use, installed when missing, so
# that `make run` and `make test` work on a fresh machine. Included by the
# Makefile.

# Every package the real node (realnode.mk), the local images (images.mk) and
# the tests use: redis-server for the Redis tests, util-linux for flock,
# iproute2 for the local cluster's routes, prometheus for promtool, which
# checks and unit-tests the alerting rules (make check-rules, test/promrules).
# Debian ships promtool only with the Prometheus server, whose service
# apt-get starts where a service manager runs: make deps stops and
# disables it (and the node exporter it recommends).
DEPS_APT := $(sort $(REALNODE_APT) $(IMAGES_DEBS) util-linux iproute2 prometheus)

# apt_missing prints those of the Debian packages $(1) that are not
# installed, on one line.
apt_missing = $$(for p in $(1); do dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || echo $$p; done | tr '\n' ' ')

# apt_install installs the Debian packages $(1) that are missing, as root
# with apt-get. Elsewhere it prints one line that names them, for $(2), and
# succeeds: what needs them then falls back or says so itself.
define apt_install
missing="$(call apt_missing,$(1))"; \
if [ -n "$${missing// /}" ]; then \
  if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
    echo "$(2): missing Debian packages $$missing(not root or no apt-get; install them to get everything)" >&2; \
  else \
    echo "installing $$missing($(2))"; \
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing >/dev/null; \
  fi; \
fi
endef

##@ Set-up

.PHONY: deps
deps: ## Install the Debian packages that make run, make test and the local cluster use, when missing (as root; otherwise one line names them).
	@$(call apt_install,$(DEPS_APT),make deps)
	@for svc in prometheus prometheus-node-exporter; do \
	  if command -v systemctl >/dev/null && systemctl is-active -q $$svc 2>/dev/null; then \
	    echo "stopping the $$svc service that installing promtool started (the tests need no server)"; systemctl disable --now $$svc; \
	  fi; \
	done
