package rediscluster

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// lastRotation is when every node of a cluster last finished moving to a
// changed password.
var lastRotation = prometheus.NewGaugeVec(prometheus.GaugeOpts{
	Name: "multi_operator_rediscluster_password_rotation_timestamp_seconds",
	Help: "Unix time at which every node of the RedisCluster last finished a password rotation.",
}, []string{"namespace", "name"})

func init() {
	metrics.Registry.MustRegister(lastRotation)
}
