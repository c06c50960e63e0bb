//go:build bench

package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/manager"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/testclock"
)

// runTDSet starts the TDSet reconciler in-process as the binary would run
// it (same cache filter, same concurrency), on clk. It returns a stop func.
func (b *bench) runTDSet(clk *testclock.Offset) func() {
	b.t.Helper()
	scheme := k8sruntime.NewScheme()
	b.must(clientgoscheme.AddToScheme(scheme))
	b.must(schedulev2.AddToScheme(scheme))
	mgr, err := ctrl.NewManager(b.cfg, ctrl.Options{
		Scheme:                 scheme,
		Cache:                  manager.CacheOptions([]reconciler.Descriptor{tdset.Descriptor()}, nil),
		NewCache:               manager.NewCache,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		Controller:             ctrlconfig.Controller{MaxConcurrentReconciles: *reconcilers, SkipNameValidation: ptr.To(true)},
	})
	b.must(err)
	b.must(tdset.Descriptor().Setup(mgr, reconciler.Options{Clock: clk}))
	ctx, cancel := context.WithCancel(b.ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = mgr.Start(ctx) }()
	return func() { cancel(); <-done }
}

// tdsetLag makes N TDSets cross the same window boundary (17:00, from 1
// replica to 0) and measures, from the boundary, when each Deployment gets
// its new count. The binary manager must not run meanwhile.
func (b *bench) tdsetLag() {
	t := b.t
	ns := b.namespace("bench-tdset-lag")
	office := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)
	boundary := time.Date(2026, 3, 10, 17, 0, 0, 0, time.UTC)
	clk := &testclock.Offset{}
	clk.Set(office)
	stop := b.runTDSet(clk)
	b.must(parallel(*n, func(i int) error {
		return b.c.Create(b.ctx, &schedulev2.TDSet{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("lag-%d", i)},
			Spec: schedulev2.TDSetSpec{
				Container: schedulev2.ContainerSpec{Image: "crccheck/hello-world", Port: 8000},
				Windows: []schedulev2.Window{
					{Start: "09:00", End: "17:00", Replicas: 1},
					{Start: "17:00", End: "19:00", Replicas: 0},
				},
				DefaultReplicas: 1,
			},
		})
	}))
	replicas := func() (map[string]int32, string) {
		list := &appsv1.DeploymentList{}
		b.must(b.c.List(b.ctx, list, client.InNamespace(ns), client.MatchingLabels{ownership.LabelManagedBy: ownership.ManagedBy}))
		out := map[string]int32{}
		for _, d := range list.Items {
			out[d.Name] = ptr.Deref(d.Spec.Replicas, 1)
		}
		return out, list.ResourceVersion
	}
	deadline := time.Now().Add(5*time.Minute + time.Duration(*n)*100*time.Millisecond)
	var rv string
	for {
		var reps map[string]int32
		reps, rv = replicas()
		ones := 0
		for _, r := range reps {
			if r == 1 {
				ones++
			}
		}
		if ones >= *n {
			break
		}
		if time.Now().After(deadline) {
			stop()
			t.Errorf("TDSet lag: only %d of %d Deployments at 1 replica before the boundary", ones, *n)
			return
		}
		time.Sleep(500 * time.Millisecond)
	}
	stop()

	// A new reconciler, started lead before the boundary: it lists every
	// TDSet, finds nothing to change, and requeues each at the boundary.
	l := *lead
	if l == 0 {
		l = 5*time.Second + time.Duration(*n)*5*time.Millisecond
	}
	w := b.resumableWatch(b.ctx, rv, b.cs.AppsV1().Deployments(ns).Watch)
	defer w.Stop()
	realBoundary := clk.Set(boundary.Add(-l)).Add(l)
	// The cores' shares from the boundary on, read when it comes.
	cpuAtBoundary := make(chan map[string]float64, 1)
	time.AfterFunc(time.Until(realBoundary), func() { cpuAtBoundary <- machineCPU() })
	stop = b.runTDSet(clk)
	defer stop()

	landed := map[string]time.Duration{}
	early := 0
	timeout := time.After(l + 60*time.Second + time.Duration(*n)*50*time.Millisecond)
	for len(landed) < *n {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Errorf("TDSet lag: the watch ended with %d of %d Deployments scaled", len(landed), *n)
				goto done
			}
			d, isDep := ev.Object.(*appsv1.Deployment)
			if !isDep || ev.Type != watch.Modified || ptr.Deref(d.Spec.Replicas, 1) != 0 {
				continue
			}
			if _, seen := landed[d.Name]; seen {
				continue
			}
			lag := time.Since(realBoundary)
			if lag < 0 {
				early++
			}
			landed[d.Name] = lag
		case <-timeout:
			t.Errorf("TDSet lag: %d of %d Deployments scaled before the timeout", len(landed), *n)
			goto done
		}
	}
done:
	cpu1, cpuWall := machineCPU(), time.Since(realBoundary)
	cpu0 := <-cpuAtBoundary
	lags := make([]time.Duration, 0, len(landed))
	for _, v := range landed {
		lags = append(lags, v)
	}
	if len(lags) == 0 {
		b.add("TDSet boundary lag", "no Deployment scaled", "<= 1s", "MISSED")
		return
	}
	slices.Sort(lags)
	p50, p99, worst := percentile(lags, 0.5), percentile(lags, 0.99), lags[len(lags)-1]
	within := 0
	for _, v := range lags {
		if v >= 0 && v <= time.Second {
			within++
		}
	}
	b.add(fmt.Sprintf("TDSet boundary lag, %d TDSets (p50 / p99 / max)", *n),
		fmt.Sprintf("%s / %s / %s; %d within 1 s, %d early", secs(p50), secs(p99), secs(worst), within, early),
		"all <= 1s", verdict(within == *n && early == 0))
	b.add("TDSet boundary lag: share of the machine's cores, from the boundary to the last Deployment (the reconciler runs in the benchmark)",
		cpuShares(cpu0, cpu1, cpuWall, runtime.NumCPU()), "-", "")

	// The limit, as for creates: the benchmark's own client scaling the same
	// Deployments back, with the reconciler stopped so it does not undo it.
	stop()
	began := time.Now()
	b.must(parallel(*n, func(i int) error {
		d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: fmt.Sprintf("lag-%d", i)}}
		return b.c.Patch(b.ctx, d, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"replicas":1}}`)))
	}))
	took := time.Since(began)
	b.add(fmt.Sprintf("The same %d Deployments scaled by the benchmark's own client (the limit)", *n), fmt.Sprintf("%s (%.0f/s)", secs(took), rate(*n, took)), "-", "")
}
