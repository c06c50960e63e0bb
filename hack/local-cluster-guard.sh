#!/usr/bin/env bash
# Lets make run, make install and make uninstall touch config/local only on
# the local cluster (make dev-cluster) or when told to (LOCAL_WEBHOOKS=yes):
# config/local points TDSet's conversion webhook and the validating webhook
# at https://localhost:9443, which breaks every TDSet of any other cluster,
# and deleting it deletes every CRD, and so every custom resource.
#
# Usage: LOCAL_WEBHOOKS=yes|... local-cluster-guard.sh KUBECTL DEV_KUBECONFIG TARGET EFFECT
#   TARGET  the make target, such as "make install", for the message
#   EFFECT  what it would do to the cluster, such as "point its TDSet webhooks at https://localhost:9443"
# Exits 0 when the target may go on; otherwise prints one line and exits 1,
# before the target changes anything.
set -euo pipefail

kubectl=$1 dev_kubeconfig=$2 target=$3 effect=$4

[[ "${LOCAL_WEBHOOKS:-}" == yes ]] && exit 0

# A cluster is the local one when the current kubeconfig reaches the same
# API server, trusting the same CA, as the local cluster's kubeconfig does:
# its path alone would miss a copy of it (kwokctl writes another under
# .cluster/clusters/), and the URL alone could be a tunnel to another
# cluster on the same loopback port. --flatten inlines a CA given as a file,
# as kwokctl writes it.
identity() {
  "$kubectl" config view --minify --flatten "$@" \
    -o 'jsonpath={.clusters[0].cluster.server} {.clusters[0].cluster.certificate-authority-data}' 2>/dev/null
}

current=$(identity) || current=
if [[ -n "${current// /}" && -f "$dev_kubeconfig" ]]; then
  # --kubeconfig wins over $KUBECONFIG, so this reads only the local one.
  local_cluster=$(identity --kubeconfig "$dev_kubeconfig") || local_cluster=
  [[ "$current" == "$local_cluster" ]] && exit 0
fi

context=$("$kubectl" config current-context 2>/dev/null) || context="(none)"
server=${current%% *}
echo "$target: refused: the current context \"$context\" (${server:-no server}) is not the local cluster, and $target would $effect. Use the local cluster (make dev-cluster; export KUBECONFIG=$dev_kubeconfig), or add LOCAL_WEBHOOKS=yes to do it to \"$context\" anyway." >&2
exit 1
