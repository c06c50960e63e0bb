#!/usr/bin/env bash
# realnode.sh check | up | down | status
#
# The real node of the local cluster: containerd, runc, CNI (a bridge of
# ours), kubelet, kube-proxy and CoreDNS on this machine, joined to the
# control plane that kwokctl runs (make dev-cluster). hack/make/realnode.mk
# sets the environment below; README.md beside this file tells the design.
#
#   check  exits 0 when a real node can start here, else prints one line
#          saying why and exits 3 (the caller falls back to kwok-only).
#   up     checks, then starts everything, all state under REALNODE_DIR.
#   down   removes everything, every run, even after a crash; exits 1 when
#          something is left.
#
# No traffic leaves the machine: the pod network is a bridge with no route
# out (two FORWARD drop rules), the API server is reached on an address on lo,
# containerd's pulls go to a dead loopback proxy, and CoreDNS has no forward
# plugin.
set -uo pipefail
# REALNODE_TRACE=1 traces every command with the time, to see where time goes.
if [[ -n "${REALNODE_TRACE:-}" ]]; then PS4='+ $(date +%T.%N | cut -c1-12) '; set -x; fi

# --- Settings (realnode.mk passes them; the defaults are the same) ---------
: "${REALNODE_DIR:?REALNODE_DIR is the state directory}"
NODE_NAME=${REALNODE_NODE_NAME:-mo-realnode}
BRIDGE=${REALNODE_BRIDGE:-mo-br0}
NODE_IP=${REALNODE_NODE_IP:-10.87.0.1}
POD_CIDR=${REALNODE_POD_CIDR:-10.88.0.0/16}
POD_GATEWAY=${REALNODE_POD_GATEWAY:-10.88.0.1}
SERVICE_CIDR=${REALNODE_SERVICE_CIDR:-10.96.0.0/16}
DNS_IP=${REALNODE_DNS_IP:-10.96.0.10}
NODE_LABEL=${REALNODE_NODE_LABEL:-multi-operator.dev/real-node}
SIMULATED_LABEL=${REALNODE_SIMULATED_LABEL:-multi-operator.dev/simulated-node}
SIMULATED_TAINT=${REALNODE_SIMULATED_TAINT:-kwok.x-k8s.io/node=fake:NoSchedule}
CNI_BIN_DIR=${REALNODE_CNI_BIN_DIR:-/usr/lib/cni}
KUBECONFIG_ADMIN=${REALNODE_KUBECONFIG:-}
PKI_DIR=${REALNODE_PKI_DIR:-}
KUBELET=${REALNODE_KUBELET:-}
KUBE_PROXY=${REALNODE_KUBE_PROXY:-}
KUBECTL=${REALNODE_KUBECTL:-kubectl}
COREDNS_IMAGE=${REALNODE_COREDNS_IMAGE:-}
LOCALPATH_IMAGE=${REALNODE_LOCALPATH_IMAGE:-}
BUSYBOX_IMAGE=${REALNODE_BUSYBOX_IMAGE:-localhost/realnode-busybox:1}
PAUSE_TAR=${REALNODE_PAUSE_TAR:-}
PAUSE_IMAGE=${REALNODE_PAUSE_IMAGE:-}
# Image tarballs to import (space-separated), the CoreDNS and test images among them.
IMAGES=${REALNODE_IMAGES:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# Names of what this script makes outside its state directory.
CGROUP=mo-realnode                  # under every cgroup hierarchy
CHAIN_FORWARD=MO-REALNODE-FORWARD   # the pod network's two drop rules
CHAIN_INPUT=MO-REALNODE-INPUT       # node address and API port: lo and the bridge only
CNI_NETWORK=mo-realnode             # CNI network name (cache file names)
UNAVAILABLE=3                       # exit status: this machine cannot run a real node

STATE=$REALNODE_DIR
CTRD=$STATE/containerd
SOCK=$CTRD/containerd.sock
PIDS=$STATE/pids
LOGS=$STATE/logs

say() { echo "real node: $*"; }
warn() { echo "real node: $*" >&2; }
STARTING=
die() {
  warn "$*"
  [[ -z "$STARTING" ]] || warn "what did start is still there: make realnode-down (or make dev-cluster-down) removes it"
  exit 1
}
unavailable() { echo "real node unavailable: $*" >&2; exit "$UNAVAILABLE"; }

# The kernel keeps one line per mount; mount points escape spaces as \040.
mounts_under() {
  awk -v p="$1" '{ m = $5; gsub(/\\040/, " ", m); if (m == p || index(m, p "/") == 1) print m }' /proc/self/mountinfo
}

cgroup_dirs() { # every hierarchy's directory of ours, v1 and v2
  local h
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [[ -d "$h$CGROUP" ]] && echo "$h$CGROUP"
  done
  return 0
}

# route_free ADDR DEV: ADDR routes through the default gateway only, or to DEV.
route_free() {
  local out
  out=$(ip -o route get "$1" 2>/dev/null) || return 0
  [[ "$out" == *" via "* || "$out" == *" dev $2 "* ]]
}

# --- check ------------------------------------------------------------------
check() {
  [[ "$(uname -s)" == Linux ]] || unavailable "not Linux ($(uname -s))"
  [[ "$(id -u)" == 0 ]] || unavailable "not root (kubelet, containerd and the bridge need root)"
  local missing=() c
  for c in containerd containerd-shim-runc-v2 ctr runc iptables iptables-save conntrack ip mount umount unshare openssl setsid awk busybox; do
    command -v "$c" >/dev/null || missing+=("$c")
  done
  for c in bridge host-local loopback; do
    [[ -x "$CNI_BIN_DIR/$c" ]] || missing+=("$CNI_BIN_DIR/$c")
  done
  ((${#missing[@]} == 0)) || unavailable "missing ${missing[*]} (apt-get install containerd runc containernetworking-plugins iptables conntrack busybox-static, or make deps)"
  if [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
    local ctl
    for ctl in cpu memory pids; do
      grep -qw "$ctl" /sys/fs/cgroup/cgroup.controllers || unavailable "cgroup v2 has no $ctl controller"
    done
  else
    for c in cpu cpuacct cpuset memory pids devices freezer; do
      [[ -d /sys/fs/cgroup/$c ]] || unavailable "cgroup v1 controller $c is not mounted at /sys/fs/cgroup/$c"
    done
  fi
  local probe=/sys/fs/cgroup/memory/$CGROUP-check-$$
  [[ -f /sys/fs/cgroup/cgroup.controllers ]] && probe=/sys/fs/cgroup/$CGROUP-check-$$
  mkdir "$probe" 2>/dev/null && rmdir "$probe" || unavailable "cannot create a cgroup ($probe)"
  grep -qw overlay /proc/filesystems || unavailable "the kernel has no overlay filesystem"
  ip link add "$CGROUP-chk" type bridge 2>/dev/null || unavailable "cannot create a bridge"
  local brnf=ok
  [[ -e /proc/sys/net/bridge/bridge-nf-call-iptables ]] || brnf=
  ip link del "$CGROUP-chk" 2>/dev/null
  [[ -n "$brnf" ]] || unavailable "no br_netfilter (/proc/sys/net/bridge/bridge-nf-call-iptables)"
  ip link add "$CGROUP-v0" type veth peer name "$CGROUP-v1" 2>/dev/null || unavailable "cannot create a veth pair"
  ip link del "$CGROUP-v0" 2>/dev/null
  unshare --net true 2>/dev/null || unavailable "cannot create a network namespace"
  iptables -w -S FORWARD >/dev/null 2>&1 && iptables -w -t nat -S >/dev/null 2>&1 || unavailable "iptables does not work"
  # The addresses must be free, or ours from an earlier run: an address that
  # routes to another interface without a gateway is someone else's network.
  route_free "$NODE_IP" lo || unavailable "$NODE_IP is already used on this machine ($(ip -o route get "$NODE_IP" | head -1))"
  route_free "${POD_CIDR%.*}.254" "$BRIDGE" || unavailable "$POD_CIDR is already used on this machine ($(ip -o route get "${POD_CIDR%.*}.254" | head -1))"
  route_free "${SERVICE_CIDR%.*}.254" "$BRIDGE" || unavailable "$SERVICE_CIDR is already used on this machine ($(ip -o route get "${SERVICE_CIDR%.*}.254" | head -1))"
  # Overlay mounts must work where the state goes.
  local t made=
  [[ -d "$STATE" ]] || made=1
  mkdir -p "$STATE" 2>/dev/null || unavailable "cannot create $STATE"
  t=$(mktemp -d "$STATE/.overlay-check.XXXXXX") || unavailable "cannot write to $STATE"
  mkdir "$t/l" "$t/u" "$t/w" "$t/m"
  local ok=1
  mount -t overlay overlay -o "lowerdir=$t/l,upperdir=$t/u,workdir=$t/w" "$t/m" 2>/dev/null && umount "$t/m" || ok=
  rm -rf "$t"
  [[ -z "$made" ]] || rmdir "$STATE" 2>/dev/null
  [[ -n "$ok" ]] || unavailable "cannot mount overlayfs under $STATE"
  return 0
}

# --- up -----------------------------------------------------------------------
api_server() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" config view --minify -o jsonpath='{.clusters[0].cluster.server}'; }
kc() { "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" "$@"; }

# The name of the (first) image in a Docker archive or OCI layout tarball.
tar_image_name() {
  local n
  n=$(tar -xOf "$1" manifest.json 2>/dev/null | grep -o '"RepoTags":\["[^"]*"' | head -1 | sed 's/.*\["//; s/"$//')
  [[ -n "$n" ]] || n=$(tar -xOf "$1" index.json 2>/dev/null | grep -o '"io.containerd.image.name":"[^"]*"' | head -1 | sed 's/.*:"//; s/"$//')
  echo "$n"
}

# Starts a daemon in its own session, out of make's process group, in our
# cgroup, with its output in a log; its PID goes to pids/NAME.
start() {
  local name=$1; shift
  (
    for d in $(cgroup_dirs); do
      [[ -d "$d/system" ]] && echo "$BASHPID" > "$d/system/cgroup.procs" 2>/dev/null
    done
    exec setsid "$@" >"$LOGS/$name.log" 2>&1 </dev/null
  ) &
  echo $! > "$PIDS/$name"
}

wait_for() { # seconds description command...
  local secs=$1 what=$2; shift 2
  local end=$((SECONDS + secs))
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS >= end)); then warn "timed out after ${secs}s waiting for $what"; return 1; fi
    sleep 0.5
  done
}

make_cert() { # name subject
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes \
    -keyout "$STATE/pki/$1.key" -subj "$2" -out "$STATE/pki/$1.csr" 2>/dev/null &&
  openssl x509 -req -in "$STATE/pki/$1.csr" -CA "$PKI_DIR/ca.crt" -CAkey "$PKI_DIR/ca.key" \
    -set_serial "0x$(openssl rand -hex 16)" -days 30 -out "$STATE/pki/$1.crt" \
    -extfile <(printf 'keyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n') 2>/dev/null
}

write_kubeconfig() { # file user server
  cat > "$1" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $3
    certificate-authority: $STATE/pki/ca.crt
users:
- name: $2
  user:
    client-certificate: $STATE/pki/$2.crt
    client-key: $STATE/pki/$2.key
contexts:
- name: local
  context: {cluster: local, user: $2}
current-context: local
EOF
}

save_sysctl() { # remember a value once, to restore it at down
  local k=$1 f=/proc/sys/${1//.//}
  [[ -f "$f" ]] || return 0
  grep -q "^$k=" "$STATE/sysctl.saved" 2>/dev/null || echo "$k=$(cat "$f")" >> "$STATE/sysctl.saved"
}

setup_network() {
  ip addr show dev lo | grep -q " $NODE_IP/32 " || ip addr add "$NODE_IP/32" dev lo || return 1
  if ! ip link show "$BRIDGE" >/dev/null 2>&1; then
    ip link add "$BRIDGE" type bridge || return 1
  fi
  ip addr show dev "$BRIDGE" | grep -q " $POD_GATEWAY/" || ip addr add "$POD_GATEWAY/${POD_CIDR#*/}" dev "$BRIDGE" || return 1
  ip link set "$BRIDGE" up || return 1
  # Service addresses route to the bridge too: kube-proxy's DNAT sends them on
  # to a pod, and one no Service holds goes nowhere, never off the machine.
  ip route replace "$SERVICE_CIDR" dev "$BRIDGE" src "$POD_GATEWAY" || return 1
  local k
  for k in net.ipv4.ip_forward net.bridge.bridge-nf-call-iptables vm.overcommit_memory vm.panic_on_oom \
    kernel.panic kernel.panic_on_oops kernel.keys.root_maxkeys kernel.keys.root_maxbytes; do
    save_sysctl "$k"
  done
  echo 1 > /proc/sys/net/ipv4/ip_forward
  echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables
  # The pod network talks to itself and to this machine, nothing else; and
  # with forwarding on, this machine routes nothing else either.
  iptables -w -N "$CHAIN_FORWARD" 2>/dev/null || iptables -w -F "$CHAIN_FORWARD"
  iptables -w -A "$CHAIN_FORWARD" -i "$BRIDGE" ! -o "$BRIDGE" -j DROP -m comment --comment "real node: pod network to elsewhere"
  iptables -w -A "$CHAIN_FORWARD" ! -i "$BRIDGE" -o "$BRIDGE" -j DROP -m comment --comment "real node: elsewhere to pod network"
  iptables -w -A "$CHAIN_FORWARD" ! -i "$BRIDGE" ! -o "$BRIDGE" -j DROP -m comment --comment "real node: no routing between other interfaces"
  iptables -w -C FORWARD -j "$CHAIN_FORWARD" 2>/dev/null || iptables -w -I FORWARD 1 -j "$CHAIN_FORWARD"
  # The node address and the API server (which listens on every address,
  # IPv4 and IPv6, so that pods reach it) answer lo and the bridge only.
  local port=$1 ipt
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null && "$ipt" -w -S INPUT >/dev/null 2>&1 || continue
    "$ipt" -w -N "$CHAIN_INPUT" 2>/dev/null || "$ipt" -w -F "$CHAIN_INPUT"
    "$ipt" -w -A "$CHAIN_INPUT" -i lo -j RETURN
    "$ipt" -w -A "$CHAIN_INPUT" -i "$BRIDGE" -j RETURN
    [[ $ipt == iptables ]] && "$ipt" -w -A "$CHAIN_INPUT" -d "$NODE_IP/32" -j DROP
    "$ipt" -w -A "$CHAIN_INPUT" -p tcp --dport "$port" -j DROP
    "$ipt" -w -C INPUT -j "$CHAIN_INPUT" 2>/dev/null || "$ipt" -w -I INPUT 1 -j "$CHAIN_INPUT"
  done
}

# Our chains must come first in FORWARD and INPUT: kube-proxy's, added
# later, accept some traffic.
chains_first() {
  local ipt builtin chain
  for ipt in iptables ip6tables; do
    for builtin in FORWARD INPUT; do
      chain=$CHAIN_FORWARD; [[ $builtin == INPUT ]] && chain=$CHAIN_INPUT
      "$ipt" -w -S "$chain" >/dev/null 2>&1 || continue
      if [[ "$("$ipt" -w -S "$builtin" | sed -n 2p)" != "-A $builtin -j $chain" ]]; then
        "$ipt" -w -D "$builtin" -j "$chain" 2>/dev/null
        "$ipt" -w -I "$builtin" 1 -j "$chain"
      fi
    done
  done
}

setup_cgroups() {
  local h d
  for h in /sys/fs/cgroup/*/ /sys/fs/cgroup/; do
    [[ "$h" == /sys/fs/cgroup/ && ! -f /sys/fs/cgroup/cgroup.controllers ]] && continue
    [[ -f "${h}cgroup.procs" ]] || continue
    for d in "$h$CGROUP" "$h$CGROUP/system"; do
      mkdir -p "$d" || return 1
      if [[ -f "$d/cpuset.cpus" ]]; then
        [[ -n "$(cat "$d/cpuset.cpus")" ]] || cat "$(dirname "$d")/cpuset.cpus" > "$d/cpuset.cpus"
        [[ -n "$(cat "$d/cpuset.mems")" ]] || cat "$(dirname "$d")/cpuset.mems" > "$d/cpuset.mems"
      fi
    done
  done
}

write_configs() {
  local server=$1
  mkdir -p "$STATE/pki" "$STATE/cni/net.d" "$STATE/cni/ipam" "$CTRD/certs.d" "$CTRD/tmp" "$STATE/kubelet" "$STATE/pod-logs"
  cp "$PKI_DIR/ca.crt" "$STATE/pki/ca.crt"
  # docker.io's mirror is the loopback registry of make registry-up, which
  # serves the images samples name by their upstream names (an untagged
  # image is pulled Always); nothing else is ever asked.
  if [[ -n "${REGISTRY_ADDR:-}" ]]; then
    mkdir -p "$CTRD/certs.d/docker.io"
    printf 'server = "http://%s"\n\n[host."http://%s"]\n  capabilities = ["pull", "resolve"]\n' \
      "$REGISTRY_ADDR" "$REGISTRY_ADDR" >"$CTRD/certs.d/docker.io/hosts.toml"
  fi
  make_cert kubelet "/O=system:nodes/CN=system:node:$NODE_NAME" || return 1
  make_cert kube-proxy "/CN=system:kube-proxy" || return 1
  write_kubeconfig "$STATE/kubelet.kubeconfig" kubelet "$server"
  write_kubeconfig "$STATE/kube-proxy.kubeconfig" kube-proxy "$server"
  # No upstream DNS at all: pods with dnsPolicy Default get this file.
  echo "# real node: no DNS server outside the cluster" > "$STATE/resolv.conf"

  cat > "$STATE/cni/net.d/10-$CNI_NETWORK.conflist" <<EOF
{
  "cniVersion": "1.0.0",
  "name": "$CNI_NETWORK",
  "plugins": [
    {
      "type": "bridge",
      "bridge": "$BRIDGE",
      "isGateway": true,
      "ipMasq": false,
      "hairpinMode": true,
      "ipam": {
        "type": "host-local",
        "dataDir": "$STATE/cni/ipam",
        "ranges": [[{"subnet": "$POD_CIDR", "gateway": "$POD_GATEWAY"}]],
        "routes": [{"dst": "0.0.0.0/0"}]
      }
    }
  ]
}
EOF

  cat > "$CTRD/config.toml" <<EOF
# containerd for the real node only: its own socket, root and state.
version = 2
root = "$CTRD/root"
state = "$CTRD/state"
temp = "$CTRD/tmp"
oom_score = 0
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper"]
[grpc]
  address = "$SOCK"
[cgroup]
  path = "/$CGROUP/containerd"
[plugins."io.containerd.internal.v1.opt"]
  path = "$CTRD/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  # The VM lacks CAP_SYS_RESOURCE: runc cannot lower oom_score_adj.
  restrict_oom_score_adj = true
  disable_apparmor = true
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$CTRD/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$STATE/cni/net.d"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "$CTRD/certs.d"
EOF

  cat > "$STATE/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
# cgroup v1 is deprecated; kubelet 1.37 still runs on it when told to.
failCgroupV1: false
cgroupDriver: cgroupfs
cgroupRoot: /$CGROUP
containerRuntimeEndpoint: unix://$SOCK
address: $NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: $STATE/pki/ca.crt}
authorization:
  mode: Webhook
clusterDomain: cluster.local
clusterDNS: [$DNS_IP]
resolvConf: $STATE/resolv.conf
podLogsDir: $STATE/pod-logs
volumePluginDir: $STATE/kubelet/volume-plugins
failSwapOn: false
oomScoreAdj: 0
registerNode: true
serializeImagePulls: false
# The images are imported, never pulled: keep them, and do not evict for a
# disk that is merely busy.
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%
  imagefs.available: 1%
  nodefs.inodesFree: 1%
EOF

  cat > "$STATE/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
mode: iptables
hostnameOverride: $NODE_NAME
clientConnection:
  kubeconfig: $STATE/kube-proxy.kubeconfig
clusterCIDR: $POD_CIDR
bindAddress: $NODE_IP
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
# NodePorts on the node address only, never on an outside interface.
nodePortAddresses: [primary]
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
iptables:
  localhostNodePorts: false
  masqueradeAll: false
  syncPeriod: 30s
  minSyncPeriod: 1s
EOF
}

# manifest FILE: one of this folder's manifests, filled in.
manifest() {
  local image=$COREDNS_IMAGE
  [[ "$1" == local-path.yaml ]] && image=$LOCALPATH_IMAGE
  sed -e "s|__IMAGE__|${image:-none}|g" -e "s|__HELPER_IMAGE__|$BUSYBOX_IMAGE|g" -e "s|__PATH__|$STATE/local-path|g" \
    -e "s|__DNS_IP__|$DNS_IP|g" -e "s|__NODE_LABEL__|$NODE_LABEL|g" "$HERE/$1"
}

print_logs() {
  local f
  for f in "$LOGS"/*.log; do
    [[ -f "$f" ]] || continue
    echo "--- last lines of $f" >&2
    tail -n 15 "$f" >&2
  done
}

up() {
  local start=$SECONDS
  check
  [[ -n "$KUBECONFIG_ADMIN" && -f "$KUBECONFIG_ADMIN" ]] || die "no kubeconfig of the cluster (REALNODE_KUBECONFIG=$KUBECONFIG_ADMIN)"
  [[ -f "$PKI_DIR/ca.crt" && -f "$PKI_DIR/ca.key" ]] || die "no cluster CA in REALNODE_PKI_DIR=$PKI_DIR"
  local b
  for b in "$KUBELET" "$KUBE_PROXY" "$KUBECTL"; do
    [[ -x "$b" ]] || die "$b is not built (make realnode-bins)"
  done
  [[ -f "$PAUSE_TAR" ]] || die "no pause image tarball (REALNODE_PAUSE_TAR=$PAUSE_TAR): make images"
  [[ -n "$PAUSE_IMAGE" ]] || PAUSE_IMAGE=$(tar_image_name "$PAUSE_TAR")
  [[ -n "$PAUSE_IMAGE" ]] || die "cannot read the image name in $PAUSE_TAR"
  if [[ -f "$PIDS/kubelet" ]] && alive "$(cat "$PIDS/kubelet")"; then
    say "already up"; return 0
  fi
  local server port
  server=$(api_server) || die "cannot read the API server from $KUBECONFIG_ADMIN"
  port=${server##*:}
  kc get --raw=/readyz >/dev/null 2>&1 || die "the API server at $server does not answer"
  # The API server must advertise the node address and serve it: kwokctl has
  # to have started it with realnode.mk's REALNODE_KWOK_ARGS.
  kc get endpoints kubernetes -o jsonpath='{.subsets[0].addresses[0].ip}' 2>/dev/null | grep -qx "$NODE_IP" ||
    die "the API server does not advertise $NODE_IP: create the cluster with \$(REALNODE_KWOK_ARGS)"

  mkdir -p "$STATE" "$PIDS" "$LOGS" || die "cannot create $STATE"
  STARTING=1
  touch "$STATE/started"
  # iptables-nft makes nftables tables as it goes (kube-proxy's ip6tables
  # too); down drops those that were not here before and are empty again.
  command -v nft >/dev/null && nft list tables > "$STATE/nft-tables.before" 2>/dev/null
  # What existed before us, so that down removes only what we made.
  [[ -e /var/lib/cni ]] && touch "$STATE/had-var-lib-cni"
  [[ -e /run/containerd ]] && touch "$STATE/had-run-containerd"

  setup_network "$port" || { print_logs; die "network setup failed"; }
  setup_cgroups || die "cannot create the cgroups under /sys/fs/cgroup/*/$CGROUP"
  write_configs "$server" || die "cannot write the configuration (certificates?)"

  # containerd: no registry is reachable, and none may be tried: every pull
  # goes to a proxy on a loopback port where nothing listens.
  HTTP_PROXY=http://127.0.0.1:9 HTTPS_PROXY=http://127.0.0.1:9 NO_PROXY='' \
    start containerd containerd --config "$CTRD/config.toml"
  wait_for 30 "containerd" ctr --address "$SOCK" version || { print_logs; die "containerd did not start"; }
  local tarball
  for tarball in "$PAUSE_TAR" $IMAGES; do
    [[ -f "$tarball" ]] || { warn "no image tarball $tarball: skipped"; continue; }
    ctr --address "$SOCK" -n k8s.io images import "$tarball" >/dev/null || die "importing $tarball failed"
  done

  start kubelet "$KUBELET" --config "$STATE/kubelet.yaml" --kubeconfig "$STATE/kubelet.kubeconfig" \
    --root-dir "$STATE/kubelet" --cert-dir "$STATE/kubelet/pki" \
    --hostname-override "$NODE_NAME" --node-ip "$NODE_IP" --node-labels "$NODE_LABEL=true"
  wait_for 60 "node $NODE_NAME to register" kc get node "$NODE_NAME" || { print_logs; die "kubelet did not register the node"; }
  kc wait --for=condition=Ready "node/$NODE_NAME" --timeout=90s >/dev/null || { print_logs; die "node $NODE_NAME is not Ready"; }

  start kube-proxy "$KUBE_PROXY" --config "$STATE/kube-proxy.yaml"
  wait_for 30 "kube-proxy" iptables -w -t nat -S KUBE-SERVICES || { print_logs; die "kube-proxy made no rules"; }
  chains_first

  # The simulated nodes keep the pods that do not tolerate them.
  kc taint nodes -l "$SIMULATED_LABEL=true" "$SIMULATED_TAINT" --overwrite >/dev/null 2>&1 || true

  if [[ -n "$COREDNS_IMAGE" ]]; then
    manifest coredns.yaml | kc apply -f - >/dev/null || die "cannot apply CoreDNS"
    kc -n kube-system rollout status deployment/coredns --timeout=90s >/dev/null || { print_logs; die "CoreDNS is not ready"; }
  fi
  if [[ -n "$LOCALPATH_IMAGE" ]]; then
    mkdir -p "$STATE/local-path"
    manifest local-path.yaml | kc apply -f - >/dev/null || die "cannot apply local-path-provisioner"
    kc -n local-path-storage rollout status deployment/local-path-provisioner --timeout=90s >/dev/null ||
      { print_logs; die "local-path-provisioner is not ready"; }
  fi
  chains_first
  say "up in $((SECONDS - start))s: node $NODE_NAME ($NODE_IP), pods in $POD_CIDR on $BRIDGE, services in $SERVICE_CIDR, DNS $DNS_IP"
}

# --- down ---------------------------------------------------------------------
is_ours() { # pid: one of our daemons or shims, whose command line names our state directory
  local comm cmd
  read -r comm 2>/dev/null < "/proc/$1/comm" || return 1
  case "$comm" in
    containerd | containerd-shim* | kubelet | kube-proxy) ;;
    *) return 1 ;;
  esac
  cmd=$(tr '\0' ' ' < "/proc/$1/cmdline" 2>/dev/null) || return 1
  [[ "$cmd" == *"$STATE"* ]]
}

# alive: the process runs. A killed daemon's parent is init, which may take a
# while to reap it: a zombie counts as gone.
alive() {
  local stat
  read -r stat 2>/dev/null < "/proc/$1/stat" || return 1
  stat=${stat##*) }
  [[ "${stat%% *}" != Z ]]
}

stop_pids() { # seconds pid...: TERM all, then KILL whoever is left
  local secs=$1 pid left end; shift
  (($#)) || return 0
  kill -TERM "$@" 2>/dev/null
  end=$((SECONDS + secs))
  while :; do
    left=()
    for pid in "$@"; do alive "$pid" && left+=("$pid"); done
    ((${#left[@]})) || return 0
    ((SECONDS < end)) || break
    sleep 0.1
  done
  kill -KILL "${left[@]}" 2>/dev/null
  end=$((SECONDS + 5))
  for pid in "${left[@]}"; do
    while alive "$pid" && ((SECONDS < end)); do sleep 0.1; done
  done
  return 0
}

stop_named() { # name seconds
  local f=$PIDS/$1 pid
  [[ -f "$f" ]] || return 0
  pid=$(cat "$f")
  is_ours "$pid" && stop_pids "${2:-10}" "$pid"
  rm -f "$f"
}

our_pids() { # every process whose command line names the state directory
  local p
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [[ "$p" == "$$" || "$p" == "$BASHPID" ]] && continue
    is_ours "$p" && echo "$p"
  done
  return 0
}

cgroup_pids() { # every process in our cgroups, any hierarchy
  local d
  for d in $(cgroup_dirs); do
    find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -un
}

remove_cgroups() {
  local d
  for d in $(cgroup_dirs); do
    find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
  done
  [[ -z "$(cgroup_dirs)" ]]
}

sweep_chains() { # iptables|ip6tables: drop every KUBE-/CNI- chain and our own
  local ipt=$1 t rule chains c
  command -v "$ipt" >/dev/null || return 0
  for t in filter nat mangle raw; do
    "$ipt" -w -t "$t" -S >/dev/null 2>&1 || continue
    # First the rules that jump to them, from any chain, then the chains.
    "$ipt" -w -t "$t" -S | grep -E -- "^-A (INPUT|OUTPUT|FORWARD|PREROUTING|POSTROUTING) .*-j (KUBE-|CNI-|MO-REALNODE-)" | while IFS= read -r rule; do
      eval "$ipt -w -t $t ${rule/#-A /-D }" 2>/dev/null
    done
    chains=$("$ipt" -w -t "$t" -S | awk '$1 == "-N" && $2 ~ /^(KUBE-|CNI-|MO-REALNODE-)/ {print $2}')
    for c in $chains; do "$ipt" -w -t "$t" -F "$c" 2>/dev/null; done
    for c in $chains; do "$ipt" -w -t "$t" -X "$c" 2>/dev/null; done
  done
}

drop_new_nft_tables() {
  [[ -f "$STATE/nft-tables.before" ]] && command -v nft >/dev/null || return 0
  local word family name
  nft list tables 2>/dev/null | while read -r word family name; do
    [[ "$word" == table ]] || continue
    grep -qx "table $family $name" "$STATE/nft-tables.before" && continue
    # Empty: nothing but the table, its chains and their policies.
    if ! nft list table "$family" "$name" 2>/dev/null | grep -qvE '^\s*(table |chain |type |policy |\}|$)'; then
      nft delete table "$family" "$name" 2>/dev/null
    fi
  done
}

down() {
  local start=$SECONDS left=()
  if [[ ! -d "$STATE" ]] && [[ -z "$(cgroup_dirs)" ]] && ! ip link show "$BRIDGE" >/dev/null 2>&1 &&
     ! ip addr show dev lo | grep -q " $NODE_IP/32 "; then
    [[ -n "$(our_pids)" ]] || return 0 # nothing of ours here
  fi
  [[ "$(id -u)" == 0 ]] || die "down needs root"

  # 1. While the API answers: no new pods here, and the pods go now, so that
  #    kubelet runs CNI DEL for each; then the node and its objects go.
  if [[ -n "$KUBECONFIG_ADMIN" && -f "$KUBECONFIG_ADMIN" ]] && timeout 5 "$KUBECTL" --kubeconfig "$KUBECONFIG_ADMIN" get --raw=/readyz >/dev/null 2>&1 &&
     kc get node "$NODE_NAME" >/dev/null 2>&1; then
    kc cordon "$NODE_NAME" >/dev/null 2>&1
    local f
    for f in coredns.yaml local-path.yaml; do
      manifest "$f" | kc delete --ignore-not-found --wait=false -f - >/dev/null 2>&1
    done
    kc delete pods --all-namespaces --field-selector "spec.nodeName=$NODE_NAME" --force --grace-period=0 --wait=false >/dev/null 2>&1
    if [[ -f "$PIDS/kubelet" ]] && alive "$(cat "$PIDS/kubelet")"; then
      # kubelet tears each sandbox down (CNI DEL): the bridge loses its ports.
      local end=$((SECONDS + 30))
      while ((SECONDS < end)) && [[ -n "$(ip -o link show master "$BRIDGE" 2>/dev/null)" ]]; do sleep 0.5; done
    fi
    kc delete node "$NODE_NAME" --wait=false >/dev/null 2>&1
    kc taint nodes -l "$SIMULATED_LABEL=true" "${SIMULATED_TAINT%%=*}-" >/dev/null 2>&1
  fi

  # 2. The daemons, by PID, newest first; then whatever still names our state
  #    directory (containerd's shims, a daemon whose PID file is gone).
  stop_named kube-proxy 10
  stop_named kubelet 15
  local p
  for p in $(cgroup_pids); do
    # The containers: every process in our cgroups but containerd and its shims.
    is_ours "$p" || kill -KILL "$p" 2>/dev/null
  done
  stop_named containerd 3
  # The shims have nothing left to keep: no grace.
  # shellcheck disable=SC2046
  stop_pids 0 $(our_pids)
  for p in $(cgroup_pids); do kill -KILL "$p" 2>/dev/null; done
  sleep 0.2

  # 3. kube-proxy's own cleanup, then every chain left (KUBE-, CNI-, ours).
  if [[ -x "$KUBE_PROXY" ]]; then
    timeout 60 "$KUBE_PROXY" --cleanup >"$STATE.kube-proxy-cleanup.log" 2>&1 || true
    rm -f "$STATE.kube-proxy-cleanup.log"
  fi
  sweep_chains iptables
  sweep_chains ip6tables
  drop_new_nft_tables
  for p in "$POD_CIDR" "$SERVICE_CIDR" "$NODE_IP/32"; do
    conntrack -D -s "$p" >/dev/null 2>&1
    conntrack -D -d "$p" >/dev/null 2>&1
  done

  # 4. Mounts under the state directory (network namespaces, rootfs, volumes,
  #    kubelet's shared bind of its root), deepest first, until none is left.
  local m
  if [[ -d "$STATE" ]]; then
    for _ in 1 2 3 4 5; do
      [[ -n "$(mounts_under "$STATE")" ]] || break
      mounts_under "$STATE" | sort -r | while IFS= read -r m; do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
      done
    done
  fi

  # 5. The bridge (its veths went with the namespaces), the route, the address.
  ip link del "$BRIDGE" 2>/dev/null
  ip route del "$SERVICE_CIDR" 2>/dev/null
  ip addr del "$NODE_IP/32" dev lo 2>/dev/null

  # 6. cgroups, kernel settings, and files outside the state directory.
  for _ in 1 2 3 4 5; do
    remove_cgroups && break
    for p in $(cgroup_pids); do kill -KILL "$p" 2>/dev/null; done
    sleep 0.5
  done
  if [[ -f "$STATE/sysctl.saved" ]]; then
    local kv
    while IFS= read -r kv; do
      echo "${kv#*=}" > "/proc/sys/$(echo "${kv%%=*}" | tr . /)" 2>/dev/null
    done < "$STATE/sysctl.saved"
  fi
  if [[ -d "$STATE" ]]; then
    if [[ ! -e "$STATE/had-var-lib-cni" ]]; then
      rm -rf /var/lib/cni
    elif [[ -e "$STATE/started" ]]; then
      find /var/lib/cni/results -maxdepth 1 \( -name "$CNI_NETWORK-*" -o -name "cni-loopback-*" \) -newer "$STATE/started" -delete 2>/dev/null
    fi
    [[ -e "$STATE/had-run-containerd" ]] || rm -rf /run/containerd
    [[ -n "$(mounts_under "$STATE")" ]] || rm -rf "$STATE"
  fi

  # 7. What is left, if anything, in one line.
  [[ -z "$(our_pids)" ]] || left+=("processes $(our_pids | tr '\n' ' ')")
  [[ -z "$(mounts_under "$STATE")" ]] || left+=("mounts under $STATE")
  ip link show "$BRIDGE" >/dev/null 2>&1 && left+=("bridge $BRIDGE")
  ip addr show dev lo | grep -q " $NODE_IP/32 " && left+=("address $NODE_IP")
  [[ -z "$(cgroup_dirs)" ]] || left+=("cgroups $(cgroup_dirs | tr '\n' ' ')")
  local ipt t
  for ipt in iptables ip6tables; do
    command -v "$ipt" >/dev/null || continue
    for t in filter nat mangle raw; do
      "$ipt" -w -t "$t" -S 2>/dev/null | grep -qE '^-N (KUBE-|CNI-|MO-REALNODE-)' && left+=("$ipt $t chains")
    done
  done
  if ((${#left[@]})); then
    warn "down left: ${left[*]}"
    return 1
  fi
  say "down in $((SECONDS - start))s"
}

status() {
  local n pid
  for n in containerd kubelet kube-proxy; do
    pid=$(cat "$PIDS/$n" 2>/dev/null)
    if [[ -n "$pid" ]] && alive "$pid"; then echo "$n: running (pid $pid)"; else echo "$n: not running"; fi
  done
}

# import_images imports image tarballs into the running node's containerd,
# such as a manager image built after the node came up (make deploy-local).
import_images() {
  [[ -S "$SOCK" ]] || die "the real node is not running (no $SOCK)"
  local tarball
  for tarball in "$@"; do
    ctr --address "$SOCK" -n k8s.io images import "$tarball" >/dev/null || die "importing $tarball failed"
    say "imported $tarball"
  done
}

# tag_image gives an imported image a second name, as a registry serves
# one image under two tags: the e2e suite rolls an image change out with it.
tag_image() {
  [[ -S "$SOCK" ]] || die "the real node is not running (no $SOCK)"
  [[ $# -eq 2 ]] || die "usage: realnode.sh tag SOURCE TARGET"
  ctr --address "$SOCK" -n k8s.io images tag --force "$1" "$2" >/dev/null || die "tagging $1 as $2 failed"
}

case "${1:-}" in
  check) check ;;
  import) shift; import_images "$@" ;;
  tag) shift; tag_image "$@" ;;
  up) up ;;
  down) down ;;
  status) status ;;
  *) echo "usage: realnode.sh check|up|down|status|import TARBALL...|tag SOURCE TARGET" >&2; exit 2 ;;
esac
