# The file-based catalog of multi-operator (make catalog), served by opm. Build it
# from this directory: docker build -f catalog.Dockerfile -t $CATALOG_IMG .
FROM quay.io/operator-framework/opm:v1.59.0
ENTRYPOINT ["/bin/opm"]
CMD ["serve", "/configs", "--cache-dir=/tmp/cache"]
ADD catalog /configs
RUN ["/bin/opm", "serve", "/configs", "--cache-dir=/tmp/cache", "--cache-only"]
LABEL operators.operatorframework.io.index.configs.v1=/configs
