// Package upgrade tests the upgrade from the release that served and stored
// TDSet only as schedule.rs/v1 (its CRD is testdata/tdsets-v1-only.yaml) to
// this one, which serves v1 and v2, stores v2 and converts through the
// manager's webhook: objects made before the upgrade read in both versions,
// and pkg/storageversion (make migrate-storage) rewrites them in v2 and
// trims the CRD's status.storedVersions.
package upgrade

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/go-logr/logr/testr"
	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/util/retry"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/yaml"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/storageversion"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// The control plane starts with the previous release's TDSet CRD only.
func TestMain(m *testing.M) {
	os.Exit(testenv.RunWith(m, testenv.RunOptions{CRDDirectoryPaths: []string{"testdata"}},
		schedulev1.AddToScheme, schedulev2.AddToScheme, apiextensionsv1.AddToScheme))
}

const crdName = "tdsets.schedule.rs"

var bg = context.Background()

// tuesday10 is a Tuesday at 10:00 UTC, inside the 09:00-17:00 windows below.
var tuesday10 = time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)

// oldTDSet is a TDSet as the previous release's users wrote them.
func oldTDSet(ns, name string, officeReplicas int32, mutate func(*schedulev1.TDSet)) *schedulev1.TDSet {
	tds := &schedulev1.TDSet{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec: schedulev1.TDSetSpec{
			Container: schedulev1.ContainerSpec{Image: "crccheck/hello-world", Port: 8000},
			SchedulingConfig: []schedulev1.SchedulingConfig{
				{StartTime: 9, EndTime: 17, Replica: officeReplicas},
				{StartTime: 17, EndTime: 0, Replica: 2},
			},
			DefaultReplica: 1,
			TimeZone:       "UTC",
		},
	}
	if mutate != nil {
		mutate(tds)
	}
	return tds
}

// v2Spec is what the v2 API shows of oldTDSet.
func v2Spec(officeReplicas int32, mutate func(*schedulev2.TDSetSpec)) schedulev2.TDSetSpec {
	spec := schedulev2.TDSetSpec{
		TimeZone:  "UTC",
		Container: schedulev2.ContainerSpec{Image: "crccheck/hello-world", Port: 8000},
		Windows: []schedulev2.Window{
			{Start: "09:00", End: "17:00", Replicas: officeReplicas},
			{Start: "17:00", End: "00:00", Replicas: 2},
		},
		DefaultReplicas: 1,
	}
	if mutate != nil {
		mutate(&spec)
	}
	return spec
}

// serveConversion runs the manager's webhooks (tdset.SetupWebhooks, so
// /convert among them) on a local port with a certificate of a CA made for
// the test, until the test ends. It returns the CRD's conversion settings
// that point at it.
func serveConversion(t *testing.T, env *testenv.Env) *apiextensionsv1.CustomResourceConversion {
	t.Helper()
	wo := &envtest.WebhookInstallOptions{LocalServingHost: "127.0.0.1"}
	if err := wo.PrepWithoutInstalling(); err != nil {
		t.Fatalf("preparing the webhook server's certificate and port: %v", err)
	}
	t.Cleanup(func() { _ = wo.Cleanup() })
	mgr, err := ctrl.NewManager(env.Config, ctrl.Options{
		Scheme:                 env.Scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		WebhookServer: webhook.NewServer(webhook.Options{
			Host: wo.LocalServingHost, Port: wo.LocalServingPort, CertDir: wo.LocalServingCertDir,
		}),
		Controller: ctrlconfig.Controller{SkipNameValidation: ptr.To(true)},
	})
	if err != nil {
		t.Fatalf("creating the webhook manager: %v", err)
	}
	if err := tdset.SetupWebhooks(mgr); err != nil {
		t.Fatalf("registering the webhooks: %v", err)
	}
	ctx, cancel := context.WithCancel(bg)
	done := make(chan error, 1)
	go func() { done <- mgr.Start(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("the webhook server stopped with an error: %v", err)
		}
	})
	url := fmt.Sprintf("https://%s/convert", net.JoinHostPort(wo.LocalServingHost, strconv.Itoa(wo.LocalServingPort)))
	return &apiextensionsv1.CustomResourceConversion{
		Strategy: apiextensionsv1.WebhookConverter,
		Webhook: &apiextensionsv1.WebhookConversion{
			ConversionReviewVersions: []string{"v1"},
			ClientConfig:             &apiextensionsv1.WebhookClientConfig{URL: &url, CABundle: wo.LocalServingCAData},
		},
	}
}

// upgradeCRD replaces the TDSet CRD with this release's (make manifests),
// converting through conv, as applying the new release's manifests does.
func upgradeCRD(t *testing.T, g Gomega, c client.Client, conv *apiextensionsv1.CustomResourceConversion) {
	t.Helper()
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	path := filepath.Join(root, "config", "crd", "bases", "schedule.rs_tdsets", "schedule.rs_tdsets.yaml")
	raw, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred(), "this release's CRD comes from make manifests")
	next := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(yaml.UnmarshalStrict(raw, next)).To(Succeed())
	g.Expect(next.Name).To(Equal(crdName))
	next.Spec.Conversion = conv
	g.Expect(retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(bg, client.ObjectKey{Name: crdName}, crd); err != nil {
			return err
		}
		crd.Spec = next.Spec
		crd.Annotations = next.Annotations
		return c.Update(bg, crd)
	})).To(Succeed())
	// The kinds this release adds come with its CRDs, which are applied
	// before the manager (docs/upgrading.md): the TDSet controller reads
	// them.
	var added []string
	for _, kind := range []string{"schedule.rs_calendars", "schedule.rs_clustercalendars"} {
		added = append(added, filepath.Join(root, "config", "crd", "bases", kind))
	}
	_, err = envtest.InstallCRDs(testenv.Get(t).Config, envtest.CRDInstallOptions{Paths: added, ErrorIfPathMissing: true})
	g.Expect(err).NotTo(HaveOccurred())
}

// restoreV1Only deletes the TDSet CRD, and so every TDSet, and installs the
// previous release's again, so that the test can run again on the package's
// control plane (go test -count).
func restoreV1Only(t *testing.T, env *testenv.Env) {
	t.Helper()
	crd := &apiextensionsv1.CustomResourceDefinition{ObjectMeta: metav1.ObjectMeta{Name: crdName}}
	if err := env.Client.Delete(bg, crd); err != nil && !apierrors.IsNotFound(err) {
		t.Errorf("deleting the TDSet CRD: %v", err)
		return
	}
	err := wait.PollUntilContextTimeout(bg, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		err := env.Client.Get(ctx, client.ObjectKeyFromObject(crd), crd)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Errorf("the TDSet CRD was not deleted: %v", err)
		return
	}
	if _, err := envtest.InstallCRDs(env.Config, envtest.CRDInstallOptions{Paths: []string{"testdata"}, ErrorIfPathMissing: true}); err != nil {
		t.Errorf("installing the previous release's TDSet CRD again: %v", err)
	}
}

func getCRD(g Gomega, c client.Client) *apiextensionsv1.CustomResourceDefinition {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(c.Get(bg, client.ObjectKey{Name: crdName}, crd)).To(Succeed())
	return crd
}

// resourceVersions maps each TDSet's name in ns to its resourceVersion.
func resourceVersions(g Gomega, c client.Client, ns string) map[string]string {
	list := &schedulev2.TDSetList{}
	g.Expect(c.List(bg, list, client.InNamespace(ns))).To(Succeed())
	out := map[string]string{}
	for _, tds := range list.Items {
		out[tds.Name] = tds.ResourceVersion
	}
	return out
}

// dropV1 removes v1 from the CRD, as a release after this one may: the API
// server allows it only once status.storedVersions no longer lists v1.
func dropV1(c client.Client) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(bg, client.ObjectKey{Name: crdName}, crd); err != nil {
			return err
		}
		var keep []apiextensionsv1.CustomResourceDefinitionVersion
		for _, v := range crd.Spec.Versions {
			if v.Name != "v1" {
				keep = append(keep, v)
			}
		}
		crd.Spec.Versions = keep
		crd.Spec.Conversion = &apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter}
		return c.Update(bg, crd)
	})
}

func TestUpgradeFromV1Only(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	c := env.Client

	// The previous release: TDSet is v1 only.
	crd := getCRD(g, c)
	g.Expect(crd.Spec.Versions).To(HaveLen(1))
	g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v1"}))

	ns := env.Namespace(t)
	old := []*schedulev1.TDSet{
		oldTDSet(ns, "office", 5, nil),
		oldTDSet(ns, "resync", 4, func(tds *schedulev1.TDSet) { tds.Spec.IntervalMint = 30 }),
		oldTDSet(ns, "served", 3, func(tds *schedulev1.TDSet) {
			tds.Spec.Service = &schedulev1.ServiceSpec{Port: 80}
			tds.Labels = map[string]string{"team": "web"}
		}),
		oldTDSet(ns, "paused", 6, func(tds *schedulev1.TDSet) { tds.Spec.Suspend = true }),
	}
	wantV2 := map[string]schedulev2.TDSetSpec{
		"office": v2Spec(5, nil),
		"resync": v2Spec(4, func(s *schedulev2.TDSetSpec) { s.ResyncInterval = &metav1.Duration{Duration: 30 * time.Minute} }),
		"served": v2Spec(3, func(s *schedulev2.TDSetSpec) { s.Service = &schedulev2.ServiceSpec{Port: 80} }),
		"paused": v2Spec(6, func(s *schedulev2.TDSetSpec) { s.Suspend = true }),
	}
	for _, tds := range old {
		g.Expect(c.Create(bg, tds)).To(Succeed())
	}
	// The previous release's controller wrote its status.
	office := old[0]
	office.Status = schedulev1.TDSetStatus{
		ObservedGeneration: 1, DesiredReplicas: ptr.To[int32](5), AvailableReplicas: ptr.To[int32](5),
		ActiveWindow: ptr.To[int32](0), NextReplicas: ptr.To[int32](2),
	}
	g.Expect(c.Status().Update(bg, office)).To(Succeed())

	// The upgrade: this release's CRD, converted by the manager's webhook.
	conv := serveConversion(t, env)
	// Registered after the webhook server, so that it runs while the server
	// still converts the objects the CRD's deletion removes.
	t.Cleanup(func() { restoreV1Only(t, env) })
	upgradeCRD(t, g, c, conv)
	g.Eventually(func(g Gomega) {
		g.Expect(c.List(bg, &schedulev2.TDSetList{}, client.InNamespace(ns))).To(Succeed())
	}).Should(Succeed(), "v2 is served")
	crd = getCRD(g, c)
	g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v1", "v2"}), "the objects are still stored in v1")
	g.Expect(dropV1(c)).To(MatchError(ContainSubstring("storedVersions")), "v1 cannot go while it stores objects")

	// The old objects read as they were in v1, and converted in v2.
	checkBothVersions := func(g Gomega) {
		for _, want := range old {
			key := client.ObjectKeyFromObject(want)
			v1 := &schedulev1.TDSet{}
			g.Expect(c.Get(bg, key, v1)).To(Succeed())
			g.Expect(v1.Spec).To(Equal(want.Spec), "%s in v1", key)
			g.Expect(v1.Annotations).To(BeEmpty(), "%s: v1 says everything", key)
			v2 := &schedulev2.TDSet{}
			g.Expect(c.Get(bg, key, v2)).To(Succeed())
			g.Expect(v2.Spec).To(Equal(wantV2[want.Name]), "%s in v2", key)
			g.Expect(v2.Labels).To(Equal(want.Labels))
		}
		v2 := &schedulev2.TDSet{}
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(office), v2)).To(Succeed())
		g.Expect(v2.Status).To(Equal(schedulev2.TDSetStatus{
			ObservedGeneration: 1, CurrentReplicas: ptr.To[int32](5), AvailableReplicas: ptr.To[int32](5),
			ActiveWindow: ptr.To[int32](0), NextReplicas: ptr.To[int32](2),
		}))
	}
	g.Eventually(checkBothVersions).Should(Succeed(), "the API server converts through the webhook")
	before := resourceVersions(g, c, ns)
	g.Expect(before).To(HaveLen(len(old)))

	// make migrate-storage.
	res, err := storageversion.Migrate(bg, env.Config, crdName, testr.New(t))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(res).To(Equal(storageversion.Result{
		CRD: crdName, StorageVersion: "v2", Migrated: len(old),
		PreviousStoredVersions: []string{"v1", "v2"}, StoredVersions: []string{"v2"},
	}))
	crd = getCRD(g, c)
	g.Expect(crd.Status.StoredVersions).To(Equal([]string{"v2"}))
	after := resourceVersions(g, c, ns)
	g.Expect(after).To(HaveLen(len(old)))
	for name, rv := range before {
		g.Expect(after[name]).NotTo(Equal(rv), "%s was written back", name)
	}
	// The rewrite changed nothing either version shows.
	checkBothVersions(g)

	// Again: every object is stored in v2 already, so the API server skips
	// each write (an object still in v1 would be rewritten and get a new
	// resourceVersion), and storedVersions is left alone.
	again, err := storageversion.Migrate(bg, env.Config, crdName, testr.New(t))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(again).To(Equal(storageversion.Result{
		CRD: crdName, StorageVersion: "v2", Migrated: len(old), Unchanged: len(old),
		PreviousStoredVersions: []string{"v2"}, StoredVersions: []string{"v2"},
	}))
	g.Expect(resourceVersions(g, c, ns)).To(Equal(after))
	g.Expect(getCRD(g, c).ResourceVersion).To(Equal(crd.ResourceVersion))

	// This release's controller takes the migrated objects over (a
	// Deployment made while suspended gets the schedule's count too).
	_, _, _ = testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(tuesday10)}, testenv.ManagerOptions{})
	for _, tds := range old {
		want := tds.Spec.SchedulingConfig[0].Replica
		g.Eventually(func(g Gomega) {
			dep := &appsv1.Deployment{}
			g.Expect(c.Get(bg, client.ObjectKeyFromObject(tds), dep)).To(Succeed())
			g.Expect(dep.Spec.Replicas).To(Equal(ptr.To(want)), "%s's Deployment", tds.Name)
		}).Should(Succeed())
	}

	// What the trimmed storedVersions is for: a later release may stop
	// serving v1 and drop it from the CRD.
	g.Expect(dropV1(c)).To(Succeed())
	g.Eventually(func(g Gomega) {
		v2 := &schedulev2.TDSet{}
		g.Expect(c.Get(bg, client.ObjectKeyFromObject(office), v2)).To(Succeed())
		g.Expect(v2.Spec).To(Equal(wantV2["office"]))
	}).Should(Succeed())
}
