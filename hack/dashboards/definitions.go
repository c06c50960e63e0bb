package dashboards

import (
	"fmt"
	"strings"

	"github.com/multi-operator/multi-operator/pkg/podmonitor"
)

// Controllers selects every controller the manager hosts by name, in the
// metrics that carry it (test/promrules holds it to the registry).
const Controllers = "memcached|rediscluster|redisclusterbackup|redisclusterbackupschedule|tdset|whalesay"

// All are the project's dashboards: the manager's, then one per kind.
func All() []Dashboard {
	return []Dashboard{manager(), redisCluster(), memcached(), tdset(), whaleSay()}
}

// object is the selector of a kind's series in the manager's metrics:
// namespace and name are the custom resource's.
const object = `namespace=~"$namespace", name=~"$name"`

// objectVariables are the namespace and name variables of a kind's
// dashboard, offered from metric, a gauge the manager keeps for every
// custom resource of the kind.
func objectVariables(metric, kind string) []Variable {
	return []Variable{
		{Name: "namespace", Label: "Namespace", Selector: metric, LabelName: "namespace"},
		{Name: "name", Label: kind, Selector: metric + `{namespace=~"$namespace"}`, LabelName: "name"},
	}
}

// s fills an expression's %[1]s with a selector: every expression reads
// its selector once or more.
func s(expr, selector string) string { return fmt.Sprintf(expr, selector) }

func manager() Dashboard {
	// The manager's pods: controller-runtime's series carry the pod's
	// namespace and name as Prometheus scraped them.
	const pod = `namespace=~"$namespace", pod=~"$pod"`
	const ctrl = pod + `, controller=~"` + Controllers + `"`
	const queue = pod + `, name=~"` + Controllers + `"`
	return Dashboard{
		File: "manager", UID: "multi-operator-manager", Title: "multi-operator / Manager",
		Description: "The controller-manager: reconciles, work queues, API server requests, webhooks, leader election, memory and CPU.",
		Variables: []Variable{
			{Name: "namespace", Label: "Namespace", Selector: `controller_runtime_reconcile_total{controller=~"` + Controllers + `"}`, LabelName: "namespace"},
			{Name: "pod", Label: "Pod", Selector: `controller_runtime_reconcile_total{namespace=~"$namespace", controller=~"` + Controllers + `"}`, LabelName: "pod"},
		},
		Rows: []Row{
			{Title: "Reconciles", Panels: []Panel{
				{Title: "Leader", Description: "1 for the replica that holds the leader-election lease and runs the controllers.", Stat: true, Width: 6,
					Targets: []Target{{Expr: s(`max by (pod) (leader_election_master_status{%s})`, pod), Legend: "{{pod}}"}}},
				{Title: "Reconciles erroring", Description: "Share of reconciles that returned an error, over all controllers.", Stat: true, Width: 6, Unit: "percentunit",
					Targets: []Target{{Expr: s(`sum(rate(controller_runtime_reconcile_errors_total{%[1]s}[$__rate_interval])) / sum(rate(controller_runtime_reconcile_total{%[1]s}[$__rate_interval]))`, ctrl)}}},
				{Title: "Work queue depth", Description: "Items waiting in all the controllers' queues.", Stat: true, Width: 6,
					Targets: []Target{{Expr: s(`sum(workqueue_depth{%s})`, queue)}}},
				{Title: "Active workers", Description: "Reconciles running now, over all controllers.", Stat: true, Width: 6,
					Targets: []Target{{Expr: s(`sum(controller_runtime_active_workers{%s})`, ctrl)}}},
				{Title: "Reconciles by result", Description: "Reconciles per second by controller and result (success, error, requeue, requeue_after).", Unit: "ops",
					Targets: []Target{{Expr: s(`sum by (controller, result) (rate(controller_runtime_reconcile_total{%s}[$__rate_interval]))`, ctrl), Legend: "{{controller}} {{result}}"}}},
				{Title: "Reconcile errors", Description: "Reconciles per second that returned an error, and panics, by controller.", Unit: "ops",
					Targets: []Target{
						{Expr: s(`sum by (controller) (rate(controller_runtime_reconcile_errors_total{%s}[$__rate_interval]))`, ctrl), Legend: "{{controller}} errors"},
						{Expr: s(`sum by (controller) (rate(controller_runtime_reconcile_panics_total{%s}[$__rate_interval]))`, ctrl), Legend: "{{controller}} panics"},
					}},
				{Title: "Reconcile duration (p50, p99)", Unit: "s",
					Targets: []Target{
						{Expr: s(`histogram_quantile(0.5, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{%s}[$__rate_interval])))`, ctrl), Legend: "{{controller}} p50"},
						{Expr: s(`histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{%s}[$__rate_interval])))`, ctrl), Legend: "{{controller}} p99"},
					}},
				{Title: "Workers in use", Description: "Reconciles running at once against each controller's limit (--max-concurrent-reconciles).",
					Targets: []Target{
						{Expr: s(`sum by (controller) (controller_runtime_active_workers{%s})`, ctrl), Legend: "{{controller}} active"},
						{Expr: s(`max by (controller) (controller_runtime_max_concurrent_reconciles{%s})`, ctrl), Legend: "{{controller}} max"},
					}},
			}},
			{Title: "Work queues", Panels: []Panel{
				{Title: "Depth", Description: "Items waiting to be reconciled, by controller.",
					Targets: []Target{{Expr: s(`sum by (name) (workqueue_depth{%s})`, queue), Legend: "{{name}}"}}},
				{Title: "Adds and retries", Unit: "ops",
					Targets: []Target{
						{Expr: s(`sum by (name) (rate(workqueue_adds_total{%s}[$__rate_interval]))`, queue), Legend: "{{name}} adds"},
						{Expr: s(`sum by (name) (rate(workqueue_retries_total{%s}[$__rate_interval]))`, queue), Legend: "{{name}} retries"},
					}},
				{Title: "Time in queue (p99)", Description: "How long items wait before a worker takes them (MultiOperatorWorkqueueBackingUp).", Unit: "s",
					Targets: []Target{{Expr: s(`histogram_quantile(0.99, sum by (name, le) (rate(workqueue_queue_duration_seconds_bucket{%s}[$__rate_interval])))`, queue), Legend: "{{name}}"}}},
				{Title: "Longest running reconcile", Description: "Age of the oldest reconcile in progress (MultiOperatorReconcileStuck).", Unit: "s",
					Targets: []Target{{Expr: s(`max by (name) (workqueue_longest_running_processor_seconds{%s})`, queue), Legend: "{{name}}"}}},
			}},
			{Title: "API server", Panels: []Panel{
				{Title: "Requests by code", Description: "Requests per second to the API server by status code and method.", Unit: "reqps",
					Targets: []Target{{Expr: s(`sum by (code, method) (rate(rest_client_requests_total{%s}[$__rate_interval]))`, pod), Legend: "{{method}} {{code}}"}}},
				{Title: "Failed requests", Description: "Requests per second answered with 4xx or 5xx: 409 conflicts and 404s are ordinary, 429 is API Priority and Fairness throttling.", Unit: "reqps",
					Targets: []Target{{Expr: s(`sum by (code) (rate(rest_client_requests_total{%s, code=~"[45].."}[$__rate_interval]))`, pod), Legend: "{{code}}"}}},
			}},
			{Title: "Webhooks", Panels: []Panel{
				{Title: "Requests by code", Description: "Admission and conversion requests per second the webhook server answered, by path and HTTP code.", Unit: "reqps",
					Targets: []Target{{Expr: s(`sum by (webhook, code) (rate(controller_runtime_webhook_requests_total{%s}[$__rate_interval]))`, pod), Legend: "{{webhook}} {{code}}"}}},
				{Title: "Latency (p99)", Unit: "s",
					Targets: []Target{{Expr: s(`histogram_quantile(0.99, sum by (webhook, le) (rate(controller_runtime_webhook_latency_seconds_bucket{%s}[$__rate_interval])))`, pod), Legend: "{{webhook}}"}}},
				{Title: "Certificate expires in", Description: "Time left of the serving certificate and its CA (MultiOperatorWebhookCertificateExpiring); the manager renews them well before.", Unit: "s",
					Targets: []Target{{Expr: s(`min by (certificate) (webhook_certificate_expiry_timestamp_seconds{%s}) - time()`, pod), Legend: "{{certificate}}"}}},
			}},
			{Title: "Process", Panels: []Panel{
				{Title: "Memory", Unit: "bytes",
					Targets: []Target{
						{Expr: s(`process_resident_memory_bytes{%s}`, pod), Legend: "{{pod}} resident"},
						{Expr: s(`go_memstats_heap_inuse_bytes{%s}`, pod), Legend: "{{pod}} Go heap in use"},
					}},
				{Title: "CPU", Description: "CPU seconds per second the manager's process uses.", Unit: "short",
					Targets: []Target{{Expr: s(`rate(process_cpu_seconds_total{%s}[$__rate_interval])`, pod), Legend: "{{pod}}"}}},
				{Title: "Goroutines",
					Targets: []Target{{Expr: s(`go_goroutines{%s}`, pod), Legend: "{{pod}}"}}},
				{Title: "Open file descriptors",
					Targets: []Target{
						{Expr: s(`process_open_fds{%s}`, pod), Legend: "{{pod}} open"},
						{Expr: s(`process_max_fds{%s}`, pod), Legend: "{{pod}} max"},
					}},
			}},
		},
	}
}

// The exporters' series carry the labels the operator's PodMonitors copy
// from the pods (podmonitor.TargetLabels): the kind's app and the custom
// resource's name, so a resource's exporters are picked by label, never
// by the names of pods another workload may share.
var (
	// redisNode picks the exporters of the RedisClusters $name.
	redisNode = exportersOf("rediscluster")
	// memcachedServer picks the exporters of the Memcacheds $name.
	memcachedServer = exportersOf("memcached")
)

// exportersOf is the selector of the exporters of the custom resources
// $name of the kind whose pods the operator runs as app.
func exportersOf(app string) string {
	return fmt.Sprintf(`namespace=~"$namespace", %s=%q, %s=~"${name:regex}"`, podmonitor.KindSeriesLabel, app, podmonitor.NameSeriesLabel)
}

// byName groups an exporter's series by custom resource: its name, as the
// name label of the operator's own series, is the PodMonitor's copy of the
// pod's instance label.
func byName(expr string) string {
	return fmt.Sprintf(`label_replace(%s, "name", "$1", %q, "(.+)")`, expr, podmonitor.NameSeriesLabel)
}

func redisCluster() Dashboard {
	node := redisNode
	master := s(`and on (namespace, pod) redis_instance_info{%s, role="master"}`, node)
	return Dashboard{
		File: "rediscluster", UID: "multi-operator-rediscluster", Title: "multi-operator / RedisCluster",
		Description: "RedisClusters: the operator's view (state, failovers, rollouts) and the nodes' own, from the redis_exporter beside each node.",
		Variables:   objectVariables("rediscluster_state", "RedisCluster"),
		Rows: []Row{
			{Title: "Operator", Panels: []Panel{
				{Title: "Cluster state", Description: "The cluster_state the nodes report (ok or fail), or unknown when the operator could read none.",
					Targets: []Target{{Expr: s(`max by (namespace, name, state) (rediscluster_state{%s}) == 1`, object), Legend: "{{namespace}}/{{name}} {{state}}"}}},
				{Title: "Failovers", Description: "Masters replaced by a replica, by cause: rollout (the operator's, planned) or redis (Redis's own; RedisClusterFailoverStorm).",
					Targets: []Target{{Expr: s(`sum by (namespace, name, cause) (increase(rediscluster_failovers_total{%s}[$__rate_interval]))`, object), Legend: "{{namespace}}/{{name}} {{cause}}"}}},
				{Title: "Rollout step", Description: "Nodes that run the revision being rolled out; no line when no rollout runs.",
					Targets: []Target{{Expr: s(`max by (namespace, name) (rediscluster_rollout_step{%s})`, object), Legend: "{{namespace}}/{{name}}"}}},
				{Title: "Slots migrated", Description: "Slots the operator moved between masters (scaling), per second.", Unit: "ops",
					Targets: []Target{{Expr: s(`sum by (namespace, name) (rate(rediscluster_slots_migrated_total{%s}[$__rate_interval]))`, object), Legend: "{{namespace}}/{{name}}"}}},
				{Title: "Canary: acknowledged writes lost", Description: "Writes a replica had acknowledged that the write canary (spec.monitoring.canary) found lost, by shard (RedisClusterAcknowledgedWritesLost).",
					Targets: []Target{{Expr: s(`sum by (namespace, name, shard) (increase(rediscluster_canary_acknowledged_writes_lost_total{%s}[$__rate_interval])) > 0`, object), Legend: "{{namespace}}/{{name}} shard {{shard}}"}}},
				{Title: "Canary: write outage", Description: "Share of the time the write canary's writes to a shard failed or no replica confirmed them in time.", Unit: "percentunit",
					Targets: []Target{{Expr: s(`sum by (namespace, name, shard) (rate(rediscluster_canary_write_outage_seconds_total{%s}[$__rate_interval])) > 0`, object), Legend: "{{namespace}}/{{name}} shard {{shard}}"}}},
				{Title: "Since the last password rotation", Unit: "s",
					Targets: []Target{{Expr: s(`time() - max by (namespace, name) (rediscluster_password_rotation_timestamp_seconds{%s})`, object), Legend: "{{namespace}}/{{name}}"}}},
			}},
			{Title: "Nodes", Panels: []Panel{
				{Title: "Nodes up", Description: "Nodes whose exporter reached redis-server, and nodes by role.",
					Targets: []Target{
						{Expr: s(`sum by (namespace, name) (`+byName(`redis_up{%s}`)+`)`, node), Legend: "{{namespace}}/{{name}} up"},
						{Expr: s(`count by (namespace, name, role) (`+byName(`redis_instance_info{%s}`)+`)`, node), Legend: "{{namespace}}/{{name}} {{role}}"},
					}},
				{Title: "Slots", Description: "Slots as the best-informed node sees them: ok below 16384 is RedisClusterSlotsUncovered.",
					Targets: []Target{
						{Expr: s(`max by (namespace, name) (`+byName(`redis_cluster_slots_ok{%s}`)+`)`, node), Legend: "{{namespace}}/{{name}} ok"},
						{Expr: s(`max by (namespace, name) (`+byName(`redis_cluster_slots_assigned{%s}`)+`)`, node), Legend: "{{namespace}}/{{name}} assigned"},
						{Expr: s(`max by (namespace, name) (`+byName(`redis_cluster_slots_pfail{%s}`)+`)`, node), Legend: "{{namespace}}/{{name}} pfail"},
						{Expr: s(`max by (namespace, name) (`+byName(`redis_cluster_slots_fail{%s}`)+`)`, node), Legend: "{{namespace}}/{{name}} fail"},
					}},
				{Title: "Memory", Description: "Memory each node uses for its data, against its maxmemory (0: none).", Unit: "bytes",
					Targets: []Target{
						{Expr: s(`redis_memory_used_bytes{%s}`, node), Legend: "{{pod}} used"},
						{Expr: s(`redis_memory_max_bytes{%s} > 0`, node), Legend: "{{pod}} maxmemory"},
					}},
				{Title: "Commands", Unit: "ops",
					Targets: []Target{{Expr: s(`rate(redis_commands_processed_total{%s}[$__rate_interval])`, node), Legend: "{{pod}}"}}},
				{Title: "Hit ratio", Description: "Key lookups that found their key.", Unit: "percentunit",
					Targets: []Target{{Expr: s(`sum by (namespace, pod) (rate(redis_keyspace_hits_total{%[1]s}[$__rate_interval])) / (sum by (namespace, pod) (rate(redis_keyspace_hits_total{%[1]s}[$__rate_interval])) + sum by (namespace, pod) (rate(redis_keyspace_misses_total{%[1]s}[$__rate_interval])))`, node), Legend: "{{pod}}"}}},
				{Title: "Evicted keys", Description: "Keys removed to stay under maxmemory.", Unit: "ops",
					Targets: []Target{{Expr: s(`rate(redis_evicted_keys_total{%s}[$__rate_interval])`, node), Legend: "{{pod}}"}}},
				{Title: "Clients",
					Targets: []Target{{Expr: s(`redis_connected_clients{%s}`, node), Legend: "{{pod}}"}}},
				{Title: "Keys",
					Targets: []Target{{Expr: s(`sum by (namespace, pod) (redis_db_keys{%s})`, node), Legend: "{{pod}}"}}},
			}},
			{Title: "Replication", Panels: []Panel{
				{Title: "Replicas per master", Description: "Replicas connected to each master (RedisClusterMasterWithoutReplica).",
					Targets: []Target{{Expr: s(`redis_connected_slaves{%s} `, node) + master, Legend: "{{pod}}"}}},
				{Title: "Replica links up", Description: "1 while a replica's link to its master is up (RedisClusterReplicationBroken).",
					Targets: []Target{{Expr: s(`redis_master_link_up{%s}`, node), Legend: "{{pod}}"}}},
				{Title: "Replica lag", Description: "Seconds since each master last heard from each of its replicas (RedisClusterReplicationLagging).", Unit: "s",
					Targets: []Target{{Expr: s(`redis_connected_slave_lag_seconds{%s}`, node), Legend: "{{pod}} → {{slave_ip}}"}}},
				{Title: "Replica offset behind", Description: "Bytes of the master's replication stream each replica has not acknowledged.", Unit: "bytes",
					Targets: []Target{{Expr: s(`redis_master_repl_offset{%[1]s} - ignoring (slave_ip, slave_port, slave_state) group_right () redis_connected_slave_offset_bytes{%[1]s}`, node), Legend: "{{pod}} → {{slave_ip}}"}}},
			}},
		},
	}
}

func memcached() Dashboard {
	server := memcachedServer
	return Dashboard{
		File: "memcached", UID: "multi-operator-memcached", Title: "multi-operator / Memcached",
		Description: "Memcacheds: the servers the operator keeps, and each server's own statistics from the exporter beside it.",
		Variables:   objectVariables("memcached_servers_desired", "Memcached"),
		Rows: []Row{
			{Title: "Operator", Panels: []Panel{
				{Title: "Servers", Description: "Servers each Memcached asks for (spec.size) and those its Deployment reports available.", Width: 24,
					Targets: []Target{
						{Expr: s(`max by (namespace, name) (memcached_servers_desired{%s})`, object), Legend: "{{namespace}}/{{name}} desired"},
						{Expr: s(`max by (namespace, name) (memcached_servers_available{%s})`, object), Legend: "{{namespace}}/{{name}} available"},
					}},
			}},
			{Title: "Servers", Panels: []Panel{
				{Title: "Servers up", Description: "Servers whose exporter got their statistics.",
					Targets: []Target{{Expr: s(`sum by (namespace, name) (`+byName(`memcached_up{%s}`)+`)`, server), Legend: "{{namespace}}/{{name}}"}}},
				{Title: "Hit ratio", Description: "Gets that found their item.", Unit: "percentunit",
					Targets: []Target{{Expr: s(`sum by (namespace, pod) (rate(memcached_commands_total{%[1]s, command="get", status="hit"}[$__rate_interval])) / sum by (namespace, pod) (rate(memcached_commands_total{%[1]s, command="get"}[$__rate_interval]))`, server), Legend: "{{pod}}"}}},
				{Title: "Commands", Unit: "ops",
					Targets: []Target{{Expr: s(`sum by (namespace, pod, command) (rate(memcached_commands_total{%s}[$__rate_interval]))`, server), Legend: "{{pod}} {{command}}"}}},
				{Title: "Items",
					Targets: []Target{{Expr: s(`memcached_current_items{%s}`, server), Legend: "{{pod}}"}}},
				{Title: "Memory", Description: "Bytes the items use, against the server's limit (-m).", Unit: "bytes",
					Targets: []Target{
						{Expr: s(`memcached_current_bytes{%s}`, server), Legend: "{{pod}} used"},
						{Expr: s(`memcached_limit_bytes{%s}`, server), Legend: "{{pod}} limit"},
					}},
				{Title: "Evictions", Description: "Items removed before they expired, to make room.", Unit: "ops",
					Targets: []Target{{Expr: s(`rate(memcached_items_evicted_total{%s}[$__rate_interval])`, server), Legend: "{{pod}}"}}},
				{Title: "Connections",
					Targets: []Target{{Expr: s(`memcached_current_connections{%s}`, server), Legend: "{{pod}}"}}},
				{Title: "Network", Unit: "Bps",
					Targets: []Target{
						{Expr: s(`rate(memcached_read_bytes_total{%s}[$__rate_interval])`, server), Legend: "{{pod}} read"},
						{Expr: s(`rate(memcached_written_bytes_total{%s}[$__rate_interval])`, server), Legend: "{{pod}} written"},
					}},
			}},
		},
	}
}

func tdset() Dashboard {
	return Dashboard{
		File: "tdset", UID: "multi-operator-tdset", Title: "multi-operator / TDSet",
		Description: "TDSets: the count each schedule asks for, the replicas available, which rule sets the count, and scaling errors.",
		Variables:   objectVariables("tdset_desired_replicas", "TDSet"),
		Rows: []Row{
			{Title: "Schedule", Panels: []Panel{
				{Title: "Replicas", Description: "Replicas the schedule asks for now, and those available (TDSetBehindSchedule when short for 15 minutes).", Width: 24,
					Targets: []Target{
						{Expr: s(`max by (namespace, name) (tdset_desired_replicas{%s})`, object), Legend: "{{namespace}}/{{name}} desired"},
						{Expr: s(`max by (namespace, name) (tdset_available_replicas{%s})`, object), Legend: "{{namespace}}/{{name}} available"},
					}},
				{Title: "Rule in force", Description: "The kind of rule that sets the count: default, window, exception or override.",
					Targets: []Target{{Expr: s(`max by (namespace, name, source) (tdset_active_rule_source{%s}) == 1`, object), Legend: "{{namespace}}/{{name}} {{source}}"}}},
				{Title: "Next change in", Description: "Time until the schedule changes the count next (early by spec.scaleUpLeadTime for a scale-up).", Unit: "s",
					Targets: []Target{{Expr: s(`min by (namespace, name) (tdset_next_transition_timestamp_seconds{%s}) - time()`, object), Legend: "{{namespace}}/{{name}}"}}},
			}},
			{Title: "Scaling", Panels: []Panel{
				{Title: "Scale errors", Description: "Reconciles that could not apply the count to the Deployment or HorizontalPodAutoscaler.",
					Targets: []Target{{Expr: s(`sum by (namespace, name) (increase(tdset_scale_errors_total{%s}[$__rate_interval]))`, object), Legend: "{{namespace}}/{{name}}"}}},
				{Title: "Early scale-ups", Description: "Scale-ups that spec.scaleUpLeadTime started before their rule.",
					Targets: []Target{{Expr: s(`sum by (namespace, name) (increase(tdset_lead_time_starts_total{%s}[$__rate_interval]))`, object), Legend: "{{namespace}}/{{name}}"}}},
			}},
		},
	}
}

func whaleSay() Dashboard {
	quantile := func(q string) string {
		return s(`histogram_quantile(`+q+`, sum by (namespace, name, le) (rate(whalesay_job_duration_seconds_bucket{%s}[$__rate_interval])))`, object)
	}
	return Dashboard{
		File: "whalesay", UID: "multi-operator-whalesay", Title: "multi-operator / WhaleSay",
		Description: "WhaleSays: the Jobs they run, how they end and how long they take.",
		Variables:   objectVariables("whalesay_jobs_total", "WhaleSay"),
		Rows: []Row{
			{Title: "Jobs", Panels: []Panel{
				{Title: "Jobs finished", Description: "Jobs that finished, by outcome.",
					Targets: []Target{{Expr: s(`sum by (namespace, name, outcome) (increase(whalesay_jobs_total{%s}[$__rate_interval]))`, object), Legend: "{{namespace}}/{{name}} {{outcome}}"}}},
				{Title: "Failed share", Description: "Jobs that failed, of those that finished.", Unit: "percentunit",
					Targets: []Target{{Expr: s(`sum by (namespace, name) (rate(whalesay_jobs_total{%[1]s, outcome="failed"}[$__rate_interval])) / sum by (namespace, name) (rate(whalesay_jobs_total{%[1]s}[$__rate_interval]))`, object), Legend: "{{namespace}}/{{name}}"}}},
				{Title: "Job duration (p50, p90)", Description: "From a Job's start to its end.", Unit: "s", Width: 24,
					Targets: []Target{
						{Expr: quantile("0.5"), Legend: "{{namespace}}/{{name}} p50"},
						{Expr: quantile("0.9"), Legend: "{{namespace}}/{{name}} p90"},
					}},
			}},
		},
	}
}

// Substitute replaces the dashboards' variables in expr with values that
// match every series, as Grafana's "All" does, so that Prometheus can
// evaluate it.
func Substitute(expr string) string {
	return strings.NewReplacer(
		"${name:regex}", ".*", "$namespace", ".*", "$name", ".*", "$pod", ".*",
		"$__rate_interval", "5m",
	).Replace(expr)
}
