// Package images builds the project's container images without a Docker
// engine or a base image from a registry: single-layer images assembled
// with go-containerregistry from files on this machine, written as
// docker-archive tarballs that `ctr -n k8s.io images import` (and `docker
// load`) read.
//
// The images:
//
//   - the manager: its static binary (built like the Dockerfile's) at
//     /manager, Debian's CA bundle, user 65532 (nonroot), no shell;
//   - redis, memcached and whalesay, the operands, from Debian's
//     redis-server, memcached and cowsay packages with the shared libraries
//     ldd lists (and, for cowsay, the Perl interpreter and the modules it
//     loads), each running as the uid its controller's pod spec sets; the
//     redis image also holds redis-cli (Debian's redis-tools), for client
//     pods;
//   - pause, the pod sandbox, a static C program (pause/pause.c);
//   - hello-world, the stand-in for the TDSet sample's crccheck/hello-world:
//     Debian's static busybox running httpd on port 8000 as nobody (65534),
//     named docker.io/crccheck/hello-world:latest.
//
// The TDSet sample names its image with no tag, so the kubelet always
// pulls it. Registry serves images on a loopback address, in memory
// (go-containerregistry's pkg/registry), at the paths a mirror is asked
// for them (MirrorPath): containerd, told to use it as docker.io's mirror
// (hack/make/images.mk shows the setting), pulls crccheck/hello-world from it.
//
// Builds are reproducible: every file has the same modification time, the
// image's creation time (SOURCE_DATE_EPOCH, the commit's time, or zero),
// entries are sorted and carry no user names, and the layer is compressed
// once with the standard library. The same inputs give the same digest.
//
// The manager's multi-platform index, and every image make release
// publishes (hack/release/publish), are OCI image layouts instead
// (WriteLayout, WriteImageLayout): `skopeo copy --all --preserve-digests`
// pushes their manifests byte for byte, so a registry serves them under
// LayoutDigest, which a release's manifests name.
//
// hack/images/cmd/imagebuild is the command line, and hack/make/images.mk the make targets
// (make image, make images, make registry-up, make registry-down) with the
// image names, the tarball paths and the registry's address.
package images
