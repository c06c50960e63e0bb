package tdset_test

import (
	"encoding/json"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook/conversion"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// farFuture is an instant an override may still end at when the tests run:
// the validating webhook judges spec.override.until by the real clock.
var farFuture = time.Date(2099, 1, 1, 0, 0, 0, 0, time.UTC)

// The manager registers what TestMain does: both versions, v2 the hub, and
// the webhooks that convert and validate them.
func TestDescriptorConvertsBothVersions(t *testing.T) {
	g := NewWithT(t)
	d := tdset.Descriptor()
	s := runtime.NewScheme()
	g.Expect(d.AddToScheme(s)).To(Succeed())
	g.Expect(s.Recognizes(schedulev1.GroupVersion.WithKind("TDSet"))).To(BeTrue())
	g.Expect(s.Recognizes(schedulev2.GroupVersion.WithKind("TDSet"))).To(BeTrue())
	convertible, err := conversion.IsConvertible(s, &schedulev2.TDSet{})
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(convertible).To(BeTrue(), "v2 is the hub and v1 converts to it")
	g.Expect(d.Conversion).To(BeTrue())
	g.Expect(d.Webhooks).NotTo(BeNil())
	g.Expect(d.For).To(BeAssignableToTypeOf(&schedulev2.TDSet{}), "the controller reconciles v2")
}

// A v1 object, stored as v2, reads back as v1 exactly as it was written.
func TestV1RoundTripsThroughV2(t *testing.T) {
	env := testenv.Get(t)
	g, c, ns := NewWithT(t), env.Client, env.Namespace(t)
	v1 := builders.TDSetV1(ns, "original")
	v1.Annotations = map[string]string{"team": "web"}
	v1.Labels = map[string]string{"tier": "front"}
	v1.Spec.TimeZone = "Europe/Berlin"
	v1.Spec.IntervalMint = 30
	v1.Spec.Service = &schedulev1.ServiceSpec{Port: 80}
	v1.Spec.Suspend = true
	g.Expect(c.Create(bg, v1)).To(Succeed())

	v2 := asV2(g, c, v1)
	g.Expect(v2.Spec).To(Equal(schedulev2.TDSetSpec{
		TimeZone:        "Europe/Berlin",
		Container:       schedulev2.ContainerSpec{Image: "crccheck/hello-world", Port: 8000},
		Service:         &schedulev2.ServiceSpec{Port: 80},
		DefaultReplicas: 3,
		Windows:         builders.OriginalWindows(),
		Suspend:         true,
		ResyncInterval:  &metav1.Duration{Duration: 30 * time.Minute},
	}))
	g.Expect(v2.Annotations).To(Equal(map[string]string{"team": "web"}))
	g.Expect(v2.Labels).To(Equal(map[string]string{"tier": "front"}))
	g.Expect(v2.UID).To(Equal(v1.UID))

	back := asV1(g, c, v1)
	g.Expect(back.APIVersion).To(Or(BeEmpty(), Equal("schedule.rs/v1")))
	g.Expect(back.Spec).To(Equal(v1.Spec))
	g.Expect(back.Annotations).To(Equal(map[string]string{"team": "web"}), "v1 says everything: no %s", schedulev1.AnnotationV2Data)

	// Defaults are the same in both versions.
	bare := builders.TDSetV1(ns, "bare")
	g.Expect(c.Create(bg, bare)).To(Succeed())
	g.Expect(bare.Spec.TimeZone).To(Equal("UTC"))
	g.Expect(asV2(g, c, bare).Spec.TimeZone).To(Equal("UTC"))
	g.Expect(asV2(g, c, bare).Spec.ResyncInterval).To(BeNil())
}

// What v1 cannot say rides in an annotation, so that an update through v1
// loses none of it.
func TestV2FieldsSurviveAV1Update(t *testing.T) {
	env := testenv.Get(t)
	g, c, ns := NewWithT(t), env.Client, env.Namespace(t)
	tds := builders.TDSet(ns, "shop").TimeZone("Europe/Berlin").DefaultReplicas(2).Windows(
		builders.Window("08:30", "18:00", 6, "Mon", "Tue", "Wed", "Thu", "Fri"),
		builders.Window("19:00", "00:00", 2),
		builders.Window("10:00", "14:00", 3, "Sat"),
	).Exception("2026-12-25", 1).Exception("2026-12-31", 4).Override(8, farFuture).Autoscaling(12).
		ScaleUpLeadTime(2 * time.Minute).ResyncInterval(90 * time.Second).ServicePort(80).Obj()
	tds.Spec.Autoscaling.TargetCPUUtilizationPercentage = ptr.To[int32](70)
	g.Expect(c.Create(bg, tds)).To(Succeed())
	created := tds.Spec.DeepCopy()

	// v1 shows the one window it can, on every day at whole hours.
	v1 := asV1(g, c, tds)
	g.Expect(v1.Spec.SchedulingConfig).To(Equal([]schedulev1.SchedulingConfig{{StartTime: 19, EndTime: 0, Replica: 2}}))
	g.Expect(v1.Spec.DefaultReplica).To(Equal(int32(2)))
	g.Expect(v1.Spec.TimeZone).To(Equal("Europe/Berlin"))
	g.Expect(v1.Spec.IntervalMint).To(Equal(int32(1)), "90s in whole minutes")
	g.Expect(v1.Spec.Service).To(Equal(&schedulev1.ServiceSpec{Port: 80}))
	g.Expect(v1.Annotations).To(HaveKey(schedulev1.AnnotationV2Data))
	var data map[string]json.RawMessage
	g.Expect(json.Unmarshal([]byte(v1.Annotations[schedulev1.AnnotationV2Data]), &data)).To(Succeed())
	g.Expect(data).To(HaveKey("windows"))
	g.Expect(data).To(HaveKey("exceptions"))
	g.Expect(data).To(HaveKey("override"))
	g.Expect(data).To(HaveKey("autoscaling"))
	g.Expect(data).To(HaveKey("scaleUpLeadTime"))
	g.Expect(data).To(HaveKey("resyncInterval"))

	// The same through a list.
	list := &schedulev1.TDSetList{}
	g.Expect(c.List(bg, list, client.InNamespace(ns))).To(Succeed())
	g.Expect(list.Items).To(HaveLen(1))
	g.Expect(list.Items[0].Annotations).To(HaveKeyWithValue(schedulev1.AnnotationV2Data, v1.Annotations[schedulev1.AnnotationV2Data]))

	// An update through v1, with the object as v1 read it.
	v1.Spec.DefaultReplica = 4
	g.Expect(c.Update(bg, v1)).To(Succeed())
	got := asV2(g, c, tds)
	want := created.DeepCopy()
	want.DefaultReplicas = 4
	g.Expect(got.Spec).To(Equal(*want), "nothing lost, the change applied")
	g.Expect(got.Annotations).NotTo(HaveKey(schedulev1.AnnotationV2Data), "the annotation is v1's only")

	// A merge patch through v1 names only what changes.
	patch(g, c, &schedulev1.TDSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}, `{"spec":{"suspend":true,"intervalMint":1}}`)
	got = asV2(g, c, tds)
	want.Suspend = true
	g.Expect(got.Spec).To(Equal(*want), "intervalMint as v1 showed it keeps the exact 90s")

	// A change to the windows v1 shows would drop the ones it cannot
	// show: refused, with the way to make it (issue #40).
	err := c.Patch(bg, &schedulev1.TDSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "shop"}}, client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/spec/schedulingConfig/0/startTime","value":20}]`)))
	expectAnswer(g, err, denied, "would drop the windows v1 cannot show (with weekdays, minutes or an end day): write v2-only fields (weekdays, minutes, end days, exceptions, override, autoscaling, lead time, scaleTargetRef, onDelete) through schedule.rs/v2, not schedule.rs/v1")
	g.Expect(asV2(g, c, tds).Spec).To(Equal(*want), "nothing changed")

	// Removing the annotation with the change says the v2-only fields go.
	v1 = asV1(g, c, tds)
	delete(v1.Annotations, schedulev1.AnnotationV2Data)
	v1.Spec.SchedulingConfig[0].StartTime = 20
	g.Expect(c.Update(bg, v1)).To(Succeed())
	got = asV2(g, c, tds)
	g.Expect(got.Spec.Windows).To(Equal([]schedulev2.Window{{Start: "20:00", End: "00:00", Replicas: 2}}))
	g.Expect(got.Spec.Exceptions).To(BeNil())
	g.Expect(got.Spec.Autoscaling).To(BeNil())
}

// A window over days has no v1 form: v1 shows the windows it can, the
// annotation keeps the whole list, and an update through v1 keeps the end
// day.
func TestMultiDayWindowSurvivesAV1Update(t *testing.T) {
	env := testenv.Get(t)
	g, c, ns := NewWithT(t), env.Client, env.Namespace(t)
	windows := []schedulev2.Window{builders.Window("09:00", "17:00", 5), builders.WindowOver("Fri", "22:00", "Sat", "06:00", 4)}
	tds := builders.TDSet(ns, "night").DefaultReplicas(2).Windows(windows...).Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())

	v1 := asV1(g, c, tds)
	g.Expect(v1.Spec.SchedulingConfig).To(Equal([]schedulev1.SchedulingConfig{{StartTime: 9, EndTime: 17, Replica: 5}}))
	g.Expect(v1.Annotations).To(HaveKeyWithValue(schedulev1.AnnotationV2Data,
		`{"windows":[{"start":"09:00","end":"17:00","replicas":5},{"days":["Fri"],"start":"22:00","end":"06:00","endDay":"Sat","replicas":4}]}`))

	v1.Spec.DefaultReplica = 3
	g.Expect(c.Update(bg, v1)).To(Succeed())
	got := asV2(g, c, tds)
	g.Expect(got.Spec.Windows).To(Equal(windows), "the end day is kept")
	g.Expect(got.Spec.DefaultReplicas).To(Equal(int32(3)))
	g.Expect(got.Annotations).NotTo(HaveKey(schedulev1.AnnotationV2Data))
}

// The controller reconciles v2 only; a v1 object and its edits through v1
// reach it converted.
func TestV1EditsReachTheController(t *testing.T) {
	g := NewWithT(t)
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	v1 := builders.TDSetV1(ns, "classic")
	g.Expect(c.Create(bg, v1)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "classic")).To(Equal(int32(5))) }).Should(Succeed())

	g.Expect(c.Patch(bg, v1, client.RawPatch(types.JSONPatchType,
		[]byte(`[{"op":"replace","path":"/spec/schedulingConfig/0/replica","value":6}]`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "classic")).To(Equal(int32(6)))
		got := fetch(g, c, v1)
		g.Expect(got.Status.ObservedGeneration).To(Equal(got.Generation))
		g.Expect(got.Status.DesiredReplicas).To(HaveValue(Equal(int32(6))))
		g.Expect(got.Status.ActiveWindow).To(HaveValue(Equal(int32(0))))
	}).Should(Succeed())
	g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, "classic") }).Should(
		ContainElement("Normal DeploymentScaled: Scaled Deployment classic from 5 to 6 (window every day 09:00-17:00)"))
}
