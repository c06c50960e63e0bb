// Package controllers is the registry of every controller the manager can
// run. Adding a controller is one package under controllers/ plus one line here.
package controllers

import (
	"github.com/multi-operator/multi-operator/controllers/memcached"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/controllers/redisclusterbackup"
	"github.com/multi-operator/multi-operator/controllers/redisclusterbackupschedule"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/controllers/whalesay"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
)

// All returns every controller, in the order --help lists them.
func All() []reconciler.Descriptor {
	return []reconciler.Descriptor{
		tdset.Descriptor(),
		memcached.Descriptor(),
		rediscluster.Descriptor(),
		redisclusterbackup.Descriptor(),
		redisclusterbackupschedule.Descriptor(),
		whalesay.Descriptor(),
	}
}
