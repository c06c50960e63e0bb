# The OLM bundle image of multi-operator-namespaced (make bundle). Build it from this
# directory: docker build -f bundle-namespaced.Dockerfile -t $BUNDLE_IMG .
FROM scratch

LABEL operators.operatorframework.io.bundle.channel.default.v1=stable
LABEL operators.operatorframework.io.bundle.channels.v1=stable
LABEL operators.operatorframework.io.bundle.manifests.v1=manifests/
LABEL operators.operatorframework.io.bundle.mediatype.v1=registry+v1
LABEL operators.operatorframework.io.bundle.metadata.v1=metadata/
LABEL operators.operatorframework.io.bundle.package.v1=multi-operator-namespaced

COPY bundle-namespaced/manifests /manifests/
COPY bundle-namespaced/metadata /metadata/
