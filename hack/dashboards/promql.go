package dashboards

import (
	"fmt"
	"slices"
	"strings"
)

// ExporterMetrics are the metrics of the exporters beside the operands
// that the dashboards read, by the project whose names they are. The
// manager does not serve them, so the tests cannot take them from its
// registry; they were checked against the exporters' sources:
// oliver006/redis_exporter (exporter/exporter.go's metric maps, the
// CLUSTER INFO fields it passes through as redis_cluster_*, and
// exporter/info.go's replication metrics; v1.62.0, the newest the module
// proxy serves here) and prometheus/memcached_exporter's names, which
// pkg/memcachedexporter serves.
var ExporterMetrics = map[string][]string{
	"oliver006/redis_exporter": {
		"redis_up", "redis_instance_info", "redis_memory_used_bytes", "redis_memory_max_bytes",
		"redis_connected_clients", "redis_commands_processed_total",
		"redis_keyspace_hits_total", "redis_keyspace_misses_total", "redis_evicted_keys_total", "redis_db_keys",
		"redis_connected_slaves", "redis_master_link_up", "redis_master_repl_offset",
		"redis_connected_slave_lag_seconds", "redis_connected_slave_offset_bytes",
		"redis_cluster_slots_ok", "redis_cluster_slots_assigned", "redis_cluster_slots_pfail", "redis_cluster_slots_fail",
	},
	"prometheus/memcached_exporter": {
		"memcached_up", "memcached_current_items", "memcached_commands_total", "memcached_items_evicted_total",
		"memcached_current_bytes", "memcached_limit_bytes", "memcached_current_connections",
		"memcached_read_bytes_total", "memcached_written_bytes_total",
	},
}

// keywords are PromQL's words that are not metrics: operators, modifiers,
// and the aggregations, which a by or without clause may part from their
// parenthesis.
var keywords = []string{"and", "or", "unless", "bool", "by", "without", "on", "ignoring",
	"group_left", "group_right", "offset", "atan2", "inf", "nan",
	"sum", "min", "max", "avg", "group", "stddev", "stdvar", "count", "count_values",
	"bottomk", "topk", "quantile", "limitk", "limit_ratio"}

// labelLists are the keywords whose parenthesised list holds label names.
var labelLists = []string{"by", "without", "on", "ignoring", "group_left", "group_right"}

// MetricNames lists the metric names an expression selects, each once,
// in their order. It reads PromQL's lexical structure only (Prometheus
// itself parses the expressions in the tests): a name is an identifier
// that is not a keyword, not a function (followed by a parenthesis), and
// outside label matchers, label lists, strings and durations.
func MetricNames(expr string) ([]string, error) {
	var names []string
	i := 0
	for i < len(expr) {
		c := expr[i]
		switch {
		case c == '"' || c == '\'' || c == '`':
			end, err := skipString(expr, i)
			if err != nil {
				return nil, err
			}
			i = end
		case c == '{':
			end, err := skipTo(expr, i, '}')
			if err != nil {
				return nil, err
			}
			i = end
		case c == '[':
			end, err := skipTo(expr, i, ']')
			if err != nil {
				return nil, err
			}
			i = end
		case isIdentStart(c):
			j := i
			for j < len(expr) && isIdentChar(expr[j]) {
				j++
			}
			word := expr[i:j]
			next := j
			for next < len(expr) && strings.IndexByte(" \t\n", expr[next]) >= 0 {
				next++
			}
			switch {
			case slices.Contains(labelLists, strings.ToLower(word)) && next < len(expr) && expr[next] == '(':
				end, err := skipTo(expr, next, ')')
				if err != nil {
					return nil, err
				}
				j = end
			case slices.Contains(keywords, strings.ToLower(word)):
			case next < len(expr) && expr[next] == '(':
				// A function or an aggregation.
			default:
				if !slices.Contains(names, word) {
					names = append(names, word)
				}
			}
			i = j
		case c >= '0' && c <= '9' || c == '.':
			// A number or a duration (offset 5m): letters included.
			for i < len(expr) && (isIdentChar(expr[i]) || expr[i] == '.') {
				i++
			}
		default:
			i++
		}
	}
	return names, nil
}

func isIdentStart(c byte) bool {
	return c == '_' || c == ':' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isIdentChar(c byte) bool { return isIdentStart(c) || c >= '0' && c <= '9' }

// skipString returns the index after the string literal at i.
func skipString(expr string, i int) (int, error) {
	quote := expr[i]
	for j := i + 1; j < len(expr); j++ {
		switch {
		case expr[j] == '\\' && quote != '`':
			j++
		case expr[j] == quote:
			return j + 1, nil
		}
	}
	return 0, fmt.Errorf("unterminated string at %d of %q", i, expr)
}

// skipTo returns the index after the close that ends the bracket at i,
// skipping strings within.
func skipTo(expr string, i int, closing byte) (int, error) {
	for j := i + 1; j < len(expr); {
		switch expr[j] {
		case '"', '\'', '`':
			end, err := skipString(expr, j)
			if err != nil {
				return 0, err
			}
			j = end
		case closing:
			return j + 1, nil
		default:
			j++
		}
	}
	return 0, fmt.Errorf("no %q closes %q at %d of %q", closing, expr[i], i, expr)
}
