//go:build bench

package bench

import (
	"context"
	"fmt"
	"slices"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The conversion benchmark's names: the TDSet CRD and the validating
// webhook configuration config/local installs, and the Lease another
// holder keeps so that the benchmark's manager stays a standby.
const (
	tdsetCRD            = "tdsets.schedule.rs"
	localWebhookConfig  = "multi-operator-validating-webhook-configuration"
	conversionLease     = "bench-conversion"
	conversionNamespace = "bench-system"
	// conversionTarget is how much longer a v1 create or list may take
	// than the same as v2, the storage version.
	conversionTarget = 1.2
	// listRounds is how many times each list is timed; the median counts.
	listRounds = 5
)

// tdsetV1 is a TDSet as schedule.rs/v1 with the same schedule as the
// benchmark's v2 TDSets: 1 replica all day.
func tdsetV1(ns, name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{
		"container":        map[string]any{"image": "crccheck/hello-world", "port": int64(8000)},
		"schedulingConfig": []any{map[string]any{"startTime": int64(0), "endTime": int64(23), "replica": int64(1)}},
		"defaultReplica":   int64(1),
	}}}
	u.SetAPIVersion("schedule.rs/v1")
	u.SetKind("TDSet")
	u.SetNamespace(ns)
	u.SetName(name)
	return u
}

// conversion measures what the conversion webhook costs a client: N
// TDSets created as v1 (converted to v2 for validation and storage, and
// back for the answer) against N created as v2, and the same TDSets listed
// as v1 against as v2. Both pass the same validating webhook, so the
// difference is conversion. The manager runs as a standby (a Lease held by
// another identity), so it serves the webhooks and reconciles nothing:
// the API server's load is the clients' alone.
func (b *bench) conversion() {
	b.t.Cleanup(b.restoreConversion)
	b.kubectl("apply", "--server-side", "--force-conflicts", "-k", b.configDir("local"))
	b.namespace(conversionNamespace)
	now := metav1.NewMicroTime(time.Now())
	err := b.c.Create(b.ctx, &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: conversionNamespace, Name: conversionLease},
		Spec: coordinationv1.LeaseSpec{
			HolderIdentity: ptr.To("bench-holder"), LeaseDurationSeconds: ptr.To[int32](3600),
			AcquireTime: &now, RenewTime: &now,
		},
	})
	if err != nil && !apierrors.IsAlreadyExists(err) {
		b.t.Fatal(err)
	}
	mgr := b.start("conversion", "--controllers=tdset", "--webhook-port=9443", "--webhook-host=localhost", "--webhook-cert-dir=",
		"--leader-elect", "--leader-election-namespace="+conversionNamespace, "--leader-election-id="+conversionLease)

	v1ns, v2ns := b.namespace("bench-conversion-v1"), b.namespace("bench-conversion-v2")
	tdset := kinds[slices.IndexFunc(kinds, func(k kind) bool { return k.name == "tdset" })]
	create := map[string]func(i int) *unstructured.Unstructured{
		"v1": func(i int) *unstructured.Unstructured { return tdsetV1(v1ns, fmt.Sprintf("v1-%d", i)) },
		"v2": func(i int) *unstructured.Unstructured { return tdset.object(v2ns, fmt.Sprintf("v2-%d", i)) },
	}
	// Until the API server trusts the manager's CA and reaches it, creates
	// fail: wait for one dry-run create of each version to pass.
	for _, v := range []string{"v1", "v2"} {
		b.awaitAdmitted(create[v](-1))
	}
	m0 := b.scrape(mgr)
	// Two halves per version, interleaved, so that neither version has the
	// emptier etcd or the warmer API server to itself.
	created := map[string]time.Duration{}
	half := (*n + 1) / 2
	for _, part := range [][2]int{{0, half}, {half, *n}} {
		for _, v := range []string{"v2", "v1"} {
			began := time.Now()
			b.must(parallel(part[1]-part[0], func(i int) error { return b.c.Create(b.ctx, create[v](part[0]+i)) }))
			created[v] += time.Since(began)
		}
	}
	m1 := b.scrape(mgr)
	listed := map[string][]time.Duration{}
	for range listRounds {
		for _, v := range []string{"v2", "v1"} {
			var total time.Duration
			for _, ns := range []string{v1ns, v2ns} {
				list := &unstructured.UnstructuredList{}
				list.SetAPIVersion("schedule.rs/" + v)
				list.SetKind("TDSetList")
				began := time.Now()
				b.must(b.c.List(b.ctx, list, client.InNamespace(ns)))
				total += time.Since(began)
				if len(list.Items) != *n {
					b.t.Fatalf("listing %s as %s: %d TDSets, want %d", ns, v, len(list.Items), *n)
				}
				if got := list.Items[0].GetAPIVersion(); got != "schedule.rs/"+v {
					b.t.Fatalf("listing as %s gave %s: the CRD does not convert", v, got)
				}
			}
			listed[v] = append(listed[v], total)
		}
	}
	served := m1.sub(m0)
	converted := served.sum("controller_runtime_webhook_requests_total", func(s string) bool { return label(s, "webhook") == "/convert" })
	validated := served.sum("controller_runtime_webhook_requests_total", func(s string) bool { return label(s, "webhook") != "/convert" })

	ratio := created["v1"].Seconds() / created["v2"].Seconds()
	b.add(fmt.Sprintf("Conversion: %d TDSets created as v2 / as v1", *n),
		fmt.Sprintf("%s / %s (v1 %+.0f%%; per v1 create %.1f conversion requests; %.1f validation requests per create)",
			secs(created["v2"]), secs(created["v1"]), 100*(ratio-1), converted/float64(*n), validated/float64(2**n)),
		fmt.Sprintf("v1 <= %.1fx v2", conversionTarget), verdict(ratio <= conversionTarget))
	slices.Sort(listed["v1"])
	slices.Sort(listed["v2"])
	l1, l2 := percentile(listed["v1"], 0.5), percentile(listed["v2"], 0.5)
	ratio = l1.Seconds() / l2.Seconds()
	b.add(fmt.Sprintf("Conversion: %d TDSets listed as v2 / as v1 (median of %d)", 2**n, listRounds),
		fmt.Sprintf("%s / %s (v1 %+.0f%%)", ms(l2), ms(l1), 100*(ratio-1)),
		fmt.Sprintf("v1 <= %.1fx v2", conversionTarget), verdict(ratio <= conversionTarget))

	// The namespaces go after the manager: their TDSets must go while it
	// still converts.
	b.deleteCRs(tdset, v1ns, v2ns)
	mgr.Stop()
	b.restoreConversion()
}

// restoreConversion puts the cluster back as TestScale installs it: the
// TDSet CRD without conversion (only v2 objects remain) and no validating
// webhook, whose server is gone.
func (b *bench) restoreConversion() {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	crd := &unstructured.Unstructured{}
	crd.SetAPIVersion("apiextensions.k8s.io/v1")
	crd.SetKind("CustomResourceDefinition")
	crd.SetName(tdsetCRD)
	if err := b.c.Patch(ctx, crd, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"conversion":{"strategy":"None","webhook":null}}}`))); err != nil {
		b.t.Errorf("restoring the TDSet CRD's conversion: %v", err)
	}
	vwc := &unstructured.Unstructured{}
	vwc.SetAPIVersion("admissionregistration.k8s.io/v1")
	vwc.SetKind("ValidatingWebhookConfiguration")
	vwc.SetName(localWebhookConfig)
	if err := b.c.Delete(ctx, vwc); client.IgnoreNotFound(err) != nil {
		b.t.Errorf("deleting the validating webhook: %v", err)
	}
}

// waitFor polls done every 200 ms until it holds or timeout passes.
func waitFor(timeout time.Duration, done func() bool) error {
	deadline := time.Now().Add(timeout)
	for !done() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not done after %s", timeout)
		}
		time.Sleep(200 * time.Millisecond)
	}
	return nil
}
