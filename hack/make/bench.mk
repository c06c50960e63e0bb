# The benchmarks: the scale benchmark on the local cluster and the resharding
# benchmark against redis-server processes. Included by the Makefile.

##@ Benchmark

N    ?= 1000
IDLE ?= 60s
# Pods the run holds at once: one per Memcached, TDSet, WhaleSay and lag
# TDSet, plus the foreign Deployments' (5*N, at least 500, at most 5000).
# A kwok node takes 110 pods; keep 100 a node for headroom.
BENCH_FOREIGN ?= $(shell n=$(N); f=$$((5*n)); [ $$f -lt 500 ] && f=500; [ $$f -gt 5000 ] && f=5000; echo $$f)
BENCH_NODES   ?= $(shell echo $$(( (4*$(N) + $(BENCH_FOREIGN)) / 100 + 2 )))
# Where the table goes, relative to test/bench; CI's smoke run writes elsewhere.
BENCH_OUT     ?= results.md
# More flags of the benchmark, to look into one thing, such as
# BENCH_FLAGS="-kinds=memcached -memory=false -lag=false -workers=64".
BENCH_FLAGS   ?=

.PHONY: bench-redis
# Resharding speed against real redis-server processes on loopback (no
# cluster): pkg/redisadmin side by side with redis-cli --cluster.
REDIS_KEYS      ?= 1000000
BENCH_REDIS_OUT ?= results.md
# More flags of the Redis benchmarks, such as CI's "-compare=false" or
# "-backup-rounds=5 -restore-rounds=3".
BENCH_REDIS_FLAGS ?=
bench-redis: build $(SEAWEEDFS) ## Resharding (3 -> 5 -> 3 masters) and backup/restore benchmarks with REDIS_KEYS keys, ours vs redis-cli, and the backup and restore Jobs' own processes; writes test/benchredis/results.md and results-backup.md.
	MANAGER=$(BIN)/manager $(GO) test -tags bench -count=1 -timeout 80m -v -run '^(TestResharding|TestBackupAndRestore)$$' $(GOTEST_FLAGS) ./test/benchredis/ \
	  -args -keys=$(REDIS_KEYS) -out=$(BENCH_REDIS_OUT) $(BENCH_REDIS_FLAGS)

.PHONY: bench-tenants
# Healthy RedisClusters beside hostile tenants, against envtest and real
# redis-server processes (no cluster): slow nodes, oversized replies and
# junk metrics tokens may not slow them by more than TENANTS_TOLERANCE.
TENANTS_TOLERANCE ?= 0.10
BENCH_TENANTS_OUT ?= $(CURDIR)/test/bench/results-tenants.md
# More flags of the benchmark, such as CI's "-without-share=false -rounds=3".
BENCH_TENANTS_FLAGS ?=
bench-tenants: deps $(ENVTEST_BINS) ## Hostile-tenants benchmark: healthy RedisClusters alone, then beside slow, oversized and junk-token tenants; writes test/bench/results-tenants.md.
	$(GO) test -tags bench -count=1 -timeout 30m -v -run TestHostileTenants $(GOTEST_FLAGS) ./controllers/rediscluster/ \
	  -args -tolerance=$(TENANTS_TOLERANCE) -out=$(BENCH_TENANTS_OUT) $(BENCH_TENANTS_FLAGS)

.PHONY: bench bench-peer
# The benchmark's thousands of operand pods belong on kwok's simulated
# nodes, which a real node taints: its cluster has none.
bench: REALNODE := off
bench-peer: ## Build the benchmark's peer, the kubebuilder tutorial's Memcached operator (test/peers/tutorialmemcached), into bin/tutorialmemcached.
	$(GO) build -o $(BIN)/tutorialmemcached ./test/peers/tutorialmemcached

bench: build bench-peer dev-cluster ## Scale benchmark: N CRs per kind on the local cluster (make bench N=1000 IDLE=60s); writes test/bench/results.md.
	@if KUBECONFIG=$(DEV_KUBECONFIG) $(KUBECTL) get nodes -l $(REALNODE_NODE_LABEL) -o name | grep -q .; then \
	  echo "The local cluster has a real node, which taints the simulated nodes: run make dev-cluster-down first (the benchmark starts the cluster without one)." >&2; exit 1; fi
	@echo "Scaling the local cluster to $(BENCH_NODES) nodes"
	$(LOCALCLUSTER) -kubeconfig $(DEV_KUBECONFIG) nodes $(BENCH_NODES)
	BENCH_KUBECONFIG=$(DEV_KUBECONFIG) KUBECTL=$(KUBECTL) MANAGER=$(BIN)/manager PEER=$(BIN)/tutorialmemcached \
	  $(GO) test -tags bench -count=1 -timeout 150m -v -run '^(TestReport.*|TestScale)$$' $(GOTEST_FLAGS) ./test/bench/ \
	  -args -n=$(N) -idle=$(IDLE) -foreign=$(BENCH_FOREIGN) -out=$(BENCH_OUT) $(BENCH_FLAGS)
