#!/usr/bin/env bash
# devstore.sh up|down STATE_DIR [WEED IP]: an S3-compatible store for the
# RedisCluster backups of the local cluster (make dev-store, make run
# BACKUP_STORE=on): SeaweedFS's `weed server -s3` on IP (the real node's
# address, which pods reach; loopback without a real node), with one
# identity of random credentials, buckets created on first use, its data
# and logs in STATE_DIR. `up` writes STATE_DIR/credentials.yaml, a Secret
# labelled for the operator to apply in a tenant's namespace. Nothing
# listens beyond IP, and telemetry is off.
set -euo pipefail

cmd=${1:?usage: devstore.sh up|down STATE_DIR [WEED IP]}
dir=${2:?usage: devstore.sh up|down STATE_DIR [WEED IP]}
# SeaweedFS's default ports: the master, the volume server, the filer and
# the S3 gateway, each with its gRPC port.
s3_port=8333

running() { [ -f "$dir/pid" ] && kill -0 "$(cat "$dir/pid")" 2>/dev/null; }

case "$cmd" in
down)
  if running; then
    kill "$(cat "$dir/pid")" 2>/dev/null || true
    for _ in $(seq 50); do running || break; sleep 0.1; done
    if running; then kill -9 "$(cat "$dir/pid")" 2>/dev/null || true; fi
  fi
  rm -rf "$dir"
  ;;
up)
  weed=${3:?usage: devstore.sh up STATE_DIR WEED IP}
  ip=${4:?usage: devstore.sh up STATE_DIR WEED IP}
  if running; then
    echo "The backup store already runs on http://$ip:$s3_port ($dir)."
    exit 0
  fi
  rm -rf "$dir"
  mkdir -p "$dir/data" "$dir/logs"
  chmod 700 "$dir"
  access=dev-backups
  secret=$(head -c 30 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')
  cat >"$dir/s3.json" <<JSON
{"identities":[{"name":"dev-backups","credentials":[{"accessKey":"$access","secretKey":"$secret"}],"actions":["Admin","Read","Write","List","Tagging"]}]}
JSON
  cat >"$dir/credentials.yaml" <<YAML
# The local backup store's credentials: kubectl apply -n <namespace> -f $dir/credentials.yaml
# The label lets the operator see the Secret (docs/security.md).
apiVersion: v1
kind: Secret
metadata:
  name: backup-store
  labels:
    multi-operator.dev/watch: "true"
stringData:
  accessKeyID: $access
  secretAccessKey: $secret
YAML
  chmod 600 "$dir/s3.json" "$dir/credentials.yaml"
  setsid "$weed" -logdir="$dir/logs" server -dir="$dir/data" -ip="$ip" -ip.bind="$ip" \
    -master.telemetry=false -master.volumeSizeLimitMB=512 -volume.max=16 \
    -master.port=9333 -master.port.grpc=19333 -volume.port=8080 -volume.port.grpc=18080 \
    -filer.port=8888 -filer.port.grpc=18888 \
    -s3 -s3.port=$s3_port -s3.port.grpc=18333 -s3.port.iceberg=0 -s3.port.lance=0 \
    -s3.config="$dir/s3.json" -s3.autoCreateBucket=true -s3.iam=false \
    >"$dir/weed.log" 2>&1 </dev/null &
  echo $! >"$dir/pid"
  for _ in $(seq 900); do
    if (exec 3<>"/dev/tcp/$ip/$s3_port") 2>/dev/null; then
      echo "The backup store serves S3 on http://$ip:$s3_port (bucket: any name, created on first use)."
      echo "Its credentials, as a Secret to apply in a namespace: $dir/credentials.yaml"
      exit 0
    fi
    if ! running; then
      echo "The backup store exited; its log:" >&2
      tail -n 20 "$dir/weed.log" >&2
      exit 1
    fi
    sleep 0.1
  done
  echo "The backup store did not listen on $ip:$s3_port within 90 s; its log: $dir/weed.log" >&2
  exit 1
  ;;
*)
  echo "usage: devstore.sh up|down STATE_DIR [WEED IP]" >&2
  exit 2
  ;;
esac
