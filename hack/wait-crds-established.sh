#!/bin/sh
# wait-crds-established.sh TIMEOUT KUBECTL [KUBECTL_ARGS...]
#
# Waits up to TIMEOUT seconds until every CustomResourceDefinition of the
# cluster is Established. `kubectl wait --for=condition=Established crd
# --all` fails at once, instead of waiting, on a CRD created a moment ago
# whose status has no conditions yet (".status.conditions accessor
# error"), so this polls the conditions instead.
set -u
timeout=$1
shift
end=$(( $(date +%s) + timeout ))
query='{range .items[*]}{.metadata.name}{" "}{.status.conditions[?(@.type=="Established")].status}{"\n"}{end}'
while :; do
	if out=$("$@" get crd -o "jsonpath=$query" 2>&1); then
		pending=$(printf '%s\n' "$out" | awk 'NF && $2 != "True" { print $1 }')
		[ -z "$pending" ] && exit 0
		why="not Established: $(echo $pending)"
	else
		why="listing the CRDs failed: $out"
	fi
	if [ "$(date +%s)" -ge "$end" ]; then
		echo "CRDs not ready within ${timeout}s: $why" >&2
		exit 1
	fi
	sleep 1
done
