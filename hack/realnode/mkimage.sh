#!/usr/bin/env bash
# mkimage.sh OUT.tar NAME:TAG ROOTFS USER ENTRYPOINT [ARG...]
#
# Packs the directory ROOTFS into a single-layer image and writes it as a
# Docker archive (manifest.json, the config, one layer), which
# `ctr images import` reads. No Docker engine and no registry: the real
# node's own images (CoreDNS, the test image) are made this way. The layer is
# reproducible: sorted names, owner root, time 0.
set -euo pipefail

if (($# < 5)); then
  echo "usage: mkimage.sh OUT.tar NAME:TAG ROOTFS USER ENTRYPOINT [ARG...]" >&2
  exit 2
fi
out=$1 name=$2 rootfs=$3 user=$4
shift 4

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  -C "$rootfs" -cf "$tmp/layer.tar" .
layer_sha=$(sha256sum "$tmp/layer.tar" | cut -d' ' -f1)
mkdir "$tmp/$layer_sha"
mv "$tmp/layer.tar" "$tmp/$layer_sha/layer.tar"

# The entrypoint as a JSON array; the arguments are plain words (no quotes or
# backslashes), which is all the callers pass.
entrypoint=$(printf '"%s",' "$@")
entrypoint="[${entrypoint%,}]"
printf '{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"User":"%s","Entrypoint":%s,"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"hack/realnode/mkimage.sh"}]}' \
  "$user" "$entrypoint" "$layer_sha" > "$tmp/config.json"
config_sha=$(sha256sum "$tmp/config.json" | cut -d' ' -f1)
mv "$tmp/config.json" "$tmp/$config_sha.json"
printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' \
  "$config_sha" "$name" "$layer_sha" > "$tmp/manifest.json"

mkdir -p "$(dirname "$out")"
tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
  -C "$tmp" -cf "$out.tmp" manifest.json "$config_sha.json" "$layer_sha"
mv "$out.tmp" "$out"
