package v1

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/diff"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/randfill"

	v2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/apis/shared"
)

var (
	nextTime  = metav1.Date(2026, 5, 4, 17, 0, 0, 0, time.UTC)
	untilTime = metav1.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC)
)

// baseV1 and baseV2 are the same TDSet, which v1 says entirely.
func baseV1() *TDSet {
	return &TDSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", Generation: 3,
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"team": "shop"},
		},
		Spec: TDSetSpec{
			Container: ContainerSpec{Image: "nginx:1.27", Port: 8080},
			Service:   &ServiceSpec{Port: 80},
			SchedulingConfig: []SchedulingConfig{
				{StartTime: 9, EndTime: 17, Replica: 3},
				{StartTime: 19, EndTime: 0, Replica: 1},
			},
			DefaultReplica: 2,
			IntervalMint:   15,
			TimeZone:       "Europe/Berlin",
			Suspend:        true,
			PodTemplate:    basePodTemplate(),
		},
		Status: TDSetStatus{
			ObservedGeneration: 3,
			DesiredReplicas:    ptr.To[int32](3),
			AvailableReplicas:  ptr.To[int32](2),
			ActiveWindow:       ptr.To[int32](0),
			NextTransitionTime: &nextTime,
			NextReplicas:       ptr.To[int32](2),
			Conditions: []metav1.Condition{{
				Type: "Ready", Status: metav1.ConditionFalse, Reason: "Progressing",
				Message: "2 of 3 available", ObservedGeneration: 3, LastTransitionTime: nextTime,
			}},
		},
	}
}

// basePodTemplate is a spec.podTemplate, which both versions have.
func basePodTemplate() *shared.PodTemplate {
	return &shared.PodTemplate{
		Labels:       map[string]string{"team": "shop"},
		NodeSelector: map[string]string{"pool": "web"},
		Tolerations:  []shared.Toleration{{Key: "dedicated", Operator: "Equal", Value: "web", Effect: "NoSchedule"}},
		Affinity: &shared.Affinity{PodAntiAffinity: &shared.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []shared.PodAffinityTerm{{TopologyKey: "kubernetes.io/hostname"}},
		}},
		PriorityClassName: "shop",
		ImagePullSecrets:  []shared.LocalObjectReference{{Name: "registry"}},
	}
}

func baseV2() *v2.TDSet {
	return &v2.TDSet{
		ObjectMeta: metav1.ObjectMeta{
			Name: "web", Namespace: "shop", Generation: 3,
			Labels:      map[string]string{"app": "web"},
			Annotations: map[string]string{"team": "shop"},
		},
		Spec: v2.TDSetSpec{
			TimeZone:        "Europe/Berlin",
			Container:       v2.ContainerSpec{Image: "nginx:1.27", Port: 8080},
			Service:         &v2.ServiceSpec{Port: 80},
			DefaultReplicas: 2,
			Windows: []v2.Window{
				{Start: "09:00", End: "17:00", Replicas: 3},
				{Start: "19:00", End: "00:00", Replicas: 1},
			},
			Suspend:        true,
			ResyncInterval: &metav1.Duration{Duration: 15 * time.Minute},
			PodTemplate:    basePodTemplate(),
		},
		Status: v2.TDSetStatus{
			ObservedGeneration: 3,
			CurrentReplicas:    ptr.To[int32](3),
			AvailableReplicas:  ptr.To[int32](2),
			ActiveWindow:       ptr.To[int32](0),
			NextTransitionTime: &nextTime,
			NextReplicas:       ptr.To[int32](2),
			Conditions: []metav1.Condition{{
				Type: "Ready", Status: metav1.ConditionFalse, Reason: "Progressing",
				Message: "2 of 3 available", ObservedGeneration: 3, LastTransitionTime: nextTime,
			}},
		},
	}
}

// expectSame fails unless got and want are equal the way the API server
// compares objects.
func expectSame(g *WithT, got, want any) {
	g.ExpectWithOffset(1, apiequality.Semantic.DeepEqual(got, want)).To(BeTrue(), "-want +got:\n%s", diff.Diff(want, got))
}

// toV1 converts in to v1 and checks that in was left as it was.
func toV1(g *WithT, in *v2.TDSet) *TDSet {
	before := in.DeepCopy()
	out := &TDSet{}
	g.ExpectWithOffset(1, out.ConvertFrom(in)).To(Succeed())
	g.ExpectWithOffset(1, reflect.DeepEqual(in, before)).To(BeTrue(), "ConvertFrom modified its source")
	return out
}

// toV2 converts in to v2 and checks that in was left as it was.
func toV2(g *WithT, in *TDSet) *v2.TDSet {
	before := in.DeepCopy()
	out := &v2.TDSet{}
	g.ExpectWithOffset(1, in.ConvertTo(out)).To(Succeed())
	g.ExpectWithOffset(1, reflect.DeepEqual(in, before)).To(BeTrue(), "ConvertTo modified its source")
	return out
}

// expectRoundTrips checks both round trips through obj, a v1 object that
// came from converting want (or that v1 says entirely, when they are equal
// without the annotation).
func expectRoundTrips(g *WithT, want *v2.TDSet, obj *TDSet) {
	back := toV2(g, obj)
	if own, had := want.Annotations[AnnotationV2Data]; had {
		g.ExpectWithOffset(1, back.Annotations).To(HaveKeyWithValue(AnnotationV2Data, own), "the v2 object's own value")
	} else {
		g.ExpectWithOffset(1, back.Annotations).NotTo(HaveKey(AnnotationV2Data), "the annotation leaked into v2")
	}
	expectSame(g, back, want)
	expectSame(g, toV1(g, back), obj)
}

func TestConvertToV2(t *testing.T) {
	tests := []struct {
		name string
		v1   func(*TDSet)
		v2   func(*v2.TDSet)
	}{
		{name: "every field maps 1:1"},
		{
			name: "hours are zero-padded HH:00 on every day",
			v1: func(o *TDSet) {
				o.Spec.SchedulingConfig = []SchedulingConfig{{StartTime: 0, EndTime: 9, Replica: 0}, {StartTime: 9, EndTime: 10, Replica: 4}, {StartTime: 23, EndTime: 0, Replica: 7}}
			},
			v2: func(o *v2.TDSet) {
				o.Spec.Windows = []v2.Window{{Start: "00:00", End: "09:00", Replicas: 0}, {Start: "09:00", End: "10:00", Replicas: 4}, {Start: "23:00", End: "00:00", Replicas: 7}}
			},
		},
		{
			name: "no windows",
			v1:   func(o *TDSet) { o.Spec.SchedulingConfig = nil; o.Status.ActiveWindow = nil },
			v2:   func(o *v2.TDSet) { o.Spec.Windows = nil; o.Status.ActiveWindow = nil },
		},
		{
			name: "intervalMint 0 is no resyncInterval",
			v1:   func(o *TDSet) { o.Spec.IntervalMint = 0 },
			v2:   func(o *v2.TDSet) { o.Spec.ResyncInterval = nil },
		},
		{
			name: "intervalMint 1440 is 24h",
			v1:   func(o *TDSet) { o.Spec.IntervalMint = 1440 },
			v2:   func(o *v2.TDSet) { o.Spec.ResyncInterval = &metav1.Duration{Duration: 24 * time.Hour} },
		},
		{
			name: "no annotations, service or status",
			v1: func(o *TDSet) {
				o.Annotations, o.Spec.Service, o.Spec.Suspend, o.Status = nil, nil, false, TDSetStatus{}
			},
			v2: func(o *v2.TDSet) {
				o.Annotations, o.Spec.Service, o.Spec.Suspend, o.Status = nil, nil, false, v2.TDSetStatus{}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in, want := baseV1(), baseV2()
			if tt.v1 != nil {
				tt.v1(in)
				tt.v2(want)
			}
			got := toV2(g, in)
			expectSame(g, got, want)
			back := toV1(g, got)
			g.Expect(back.Annotations).NotTo(HaveKey(AnnotationV2Data), "nothing is lost, so no annotation")
			expectSame(g, back, in)
		})
	}
}

func TestConvertFromV2Lossy(t *testing.T) {
	daysWindow := v2.Window{Days: []v2.Weekday{"Sat", "Sun"}, Start: "10:00", End: "14:00", Replicas: 6}
	tests := []struct {
		name string
		v2   func(*v2.TDSet) // edits baseV2
		v1   func(*TDSet)    // edits baseV1 to what v1 shows
		// annotation is AnnotationV2Data's exact value; "" for none.
		annotation string
	}{
		{name: "nothing lost"},
		{
			name: "defaultReplicas 0 is carried",
			v2:   func(o *v2.TDSet) { o.Spec.DefaultReplicas = 0 },
			v1:   func(o *TDSet) { o.Spec.DefaultReplica = 0 },
		},
		{
			name: "resyncInterval of whole minutes is exact",
			v2:   func(o *v2.TDSet) { o.Spec.ResyncInterval = &metav1.Duration{Duration: 2 * time.Hour} },
			v1:   func(o *TDSet) { o.Spec.IntervalMint = 120 },
		},
		{
			name: "no resyncInterval",
			v2:   func(o *v2.TDSet) { o.Spec.ResyncInterval = nil },
			v1:   func(o *TDSet) { o.Spec.IntervalMint = 0 },
		},
		{
			name: "window with minutes is kept, the others shown and activeWindow renumbered",
			v2: func(o *v2.TDSet) {
				o.Spec.Windows = []v2.Window{{Start: "07:30", End: "09:00", Replicas: 2}, o.Spec.Windows[0], o.Spec.Windows[1]}
				o.Status.ActiveWindow = ptr.To[int32](2)
			},
			v1:         func(o *TDSet) { o.Status.ActiveWindow = ptr.To[int32](1) },
			annotation: `{"windows":[{"start":"07:30","end":"09:00","replicas":2},{"start":"09:00","end":"17:00","replicas":3},{"start":"19:00","end":"00:00","replicas":1}]}`,
		},
		{
			name: "window with days is kept, and activeWindow on it",
			v2: func(o *v2.TDSet) {
				o.Spec.Windows = append(o.Spec.Windows, daysWindow)
				o.Status.ActiveWindow = ptr.To[int32](2)
			},
			v1:         func(o *TDSet) { o.Status.ActiveWindow = nil },
			annotation: `{"windows":[{"start":"09:00","end":"17:00","replicas":3},{"start":"19:00","end":"00:00","replicas":1},{"days":["Sat","Sun"],"start":"10:00","end":"14:00","replicas":6}],"activeWindow":2}`,
		},
		{
			name: "window over days is kept, and activeWindow on it",
			v2: func(o *v2.TDSet) {
				o.Spec.Windows = append(o.Spec.Windows, v2.Window{Days: []v2.Weekday{"Fri"}, Start: "18:00", EndDay: "Mon", End: "06:00", Replicas: 4})
				o.Status.ActiveWindow = ptr.To[int32](2)
				o.Status.ActiveRule = "window Fri 18:00-Mon 06:00"
			},
			v1:         func(o *TDSet) { o.Status.ActiveWindow = nil },
			annotation: `{"windows":[{"start":"09:00","end":"17:00","replicas":3},{"start":"19:00","end":"00:00","replicas":1},{"days":["Fri"],"start":"18:00","end":"06:00","endDay":"Mon","replicas":4}],"activeWindow":2,"activeRule":"window Fri 18:00-Mon 06:00"}`,
		},
		{
			// Only a stored object that skipped admission has an end day
			// without its start day; v1 still must not show it as a window
			// of every day.
			name: "window with an end day and no days is kept",
			v2: func(o *v2.TDSet) {
				o.Spec.Windows = append(o.Spec.Windows, v2.Window{Start: "18:00", EndDay: "Mon", End: "06:00", Replicas: 4})
			},
			annotation: `{"windows":[{"start":"09:00","end":"17:00","replicas":3},{"start":"19:00","end":"00:00","replicas":1},{"start":"18:00","end":"06:00","endDay":"Mon","replicas":4}]}`,
		},
		{
			name: "no window v1 can show",
			v2:   func(o *v2.TDSet) { o.Spec.Windows = []v2.Window{daysWindow} },
			v1: func(o *TDSet) {
				o.Spec.SchedulingConfig = nil
				o.Status.ActiveWindow = nil
			},
			annotation: `{"windows":[{"days":["Sat","Sun"],"start":"10:00","end":"14:00","replicas":6}],"activeWindow":0}`,
		},
		{
			name: "activeWindow out of range with a hidden window",
			v2: func(o *v2.TDSet) {
				o.Spec.Windows = append(o.Spec.Windows, daysWindow)
				o.Status.ActiveWindow = ptr.To[int32](9)
			},
			v1:         func(o *TDSet) { o.Status.ActiveWindow = nil },
			annotation: `{"windows":[{"start":"09:00","end":"17:00","replicas":3},{"start":"19:00","end":"00:00","replicas":1},{"days":["Sat","Sun"],"start":"10:00","end":"14:00","replicas":6}],"activeWindow":9}`,
		},
		{
			name:       "resyncInterval not whole minutes shows the minutes",
			v2:         func(o *v2.TDSet) { o.Spec.ResyncInterval = &metav1.Duration{Duration: 90 * time.Second} },
			v1:         func(o *TDSet) { o.Spec.IntervalMint = 1 },
			annotation: `{"resyncInterval":"1m30s"}`,
		},
		{
			name:       "resyncInterval under a minute shows 1",
			v2:         func(o *v2.TDSet) { o.Spec.ResyncInterval = &metav1.Duration{Duration: 20 * time.Second} },
			v1:         func(o *TDSet) { o.Spec.IntervalMint = 1 },
			annotation: `{"resyncInterval":"20s"}`,
		},
		{
			name:       "resyncInterval over 1440 minutes shows 1440",
			v2:         func(o *v2.TDSet) { o.Spec.ResyncInterval = &metav1.Duration{Duration: 25 * time.Hour} },
			v1:         func(o *TDSet) { o.Spec.IntervalMint = 1440 },
			annotation: `{"resyncInterval":"25h0m0s"}`,
		},
		{
			name:       "resyncInterval 0s shows unset",
			v2:         func(o *v2.TDSet) { o.Spec.ResyncInterval = &metav1.Duration{} },
			v1:         func(o *TDSet) { o.Spec.IntervalMint = 0 },
			annotation: `{"resyncInterval":"0s"}`,
		},
		{
			name:       "exceptions",
			v2:         func(o *v2.TDSet) { o.Spec.Exceptions = []v2.Exception{{Date: "2026-12-25", Replicas: 0}} },
			annotation: `{"exceptions":[{"date":"2026-12-25","replicas":0}]}`,
		},
		{
			name: "calendars",
			v2: func(o *v2.TDSet) {
				o.Spec.Calendars = []v2.CalendarRef{{Name: "holidays"}, {Kind: v2.CalendarKindCluster, Name: "de", Replicas: ptr.To[int32](2)}}
			},
			annotation: `{"calendars":[{"name":"holidays"},{"kind":"ClusterCalendar","name":"de","replicas":2}]}`,
		},
		{
			name:       "override",
			v2:         func(o *v2.TDSet) { o.Spec.Override = &v2.Override{Replicas: 5, Until: untilTime} },
			annotation: `{"override":{"replicas":5,"until":"2026-06-01T12:00:00Z"}}`,
		},
		{
			name: "autoscaling",
			v2: func(o *v2.TDSet) {
				o.Spec.Autoscaling = &v2.Autoscaling{MaxReplicas: 10, TargetCPUUtilizationPercentage: ptr.To[int32](70)}
			},
			annotation: `{"autoscaling":{"maxReplicas":10,"targetCPUUtilizationPercentage":70}}`,
		},
		{
			name: "an hpaRef and the HPA's recorded bounds",
			v2: func(o *v2.TDSet) {
				o.Spec.Container = v2.ContainerSpec{}
				o.Spec.ScaleTargetRef = &v2.ScaleTargetRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
				o.Spec.Autoscaling = &v2.Autoscaling{HPARef: &v2.HPARef{Name: "web-hpa"}}
				o.Status.Target = &v2.TargetStatus{APIVersion: "apps/v1", Kind: "Deployment", Name: "web", Autoscaler: &v2.AutoscalerStatus{
					Name: "web-hpa", MinReplicas: ptr.To[int32](5), MaxReplicas: ptr.To[int32](8), OriginalMinReplicas: ptr.To[int32](2), OriginalMaxReplicas: ptr.To[int32](8)}}
			},
			v1: func(o *TDSet) { o.Spec.Container = ContainerSpec{} },
			annotation: `{"autoscaling":{"hpaRef":{"name":"web-hpa"}},"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},` +
				`"target":{"apiVersion":"apps/v1","kind":"Deployment","name":"web","autoscaler":{"name":"web-hpa","minReplicas":5,"maxReplicas":8,"originalMinReplicas":2,"originalMaxReplicas":8}}}`,
		},
		{
			name:       "scaleUpLeadTime",
			v2:         func(o *v2.TDSet) { o.Spec.ScaleUpLeadTime = &metav1.Duration{Duration: 5 * time.Minute} },
			annotation: `{"scaleUpLeadTime":"5m0s"}`,
		},
		{
			name:       "scaleUpLeadTime 0s is not nil",
			v2:         func(o *v2.TDSet) { o.Spec.ScaleUpLeadTime = &metav1.Duration{} },
			annotation: `{"scaleUpLeadTime":"0s"}`,
		},
		{
			name:       "status activeRule",
			v2:         func(o *v2.TDSet) { o.Status.ActiveRule = "window 09:00-17:00" },
			annotation: `{"activeRule":"window 09:00-17:00"}`,
		},
		{
			name:       "a v2 object's own annotation of that key",
			v2:         func(o *v2.TDSet) { o.Annotations[AnnotationV2Data] = `{"windows":[]}` },
			annotation: `{"annotation":"{\"windows\":[]}"}`,
		},
		{
			name: "everything at once, in a fixed order",
			v2: func(o *v2.TDSet) {
				o.Annotations = nil
				o.Spec.Windows = []v2.Window{{Start: "09:15", End: "17:00", Replicas: 3}, o.Spec.Windows[1]}
				o.Spec.ResyncInterval = &metav1.Duration{Duration: 90 * time.Second}
				o.Spec.Exceptions = []v2.Exception{{Date: "2026-12-25", Replicas: 0}, {Date: "2027-01-01", Replicas: 1}}
				o.Spec.Override = &v2.Override{Replicas: 5, Until: untilTime}
				o.Spec.Autoscaling = &v2.Autoscaling{MaxReplicas: 10}
				o.Spec.ScaleUpLeadTime = &metav1.Duration{Duration: time.Minute}
				o.Status.ActiveRule = "override until 2026-06-01T12:00:00Z"
			},
			v1: func(o *TDSet) {
				o.Annotations = nil
				o.Spec.SchedulingConfig = o.Spec.SchedulingConfig[1:]
				o.Spec.IntervalMint = 1
				o.Status.ActiveWindow = nil
			},
			annotation: `{"windows":[{"start":"09:15","end":"17:00","replicas":3},{"start":"19:00","end":"00:00","replicas":1}],"activeWindow":0,` +
				`"resyncInterval":"1m30s","exceptions":[{"date":"2026-12-25","replicas":0},{"date":"2027-01-01","replicas":1}],` +
				`"override":{"replicas":5,"until":"2026-06-01T12:00:00Z"},"autoscaling":{"maxReplicas":10},"scaleUpLeadTime":"1m0s",` +
				`"activeRule":"override until 2026-06-01T12:00:00Z"}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			in, want := baseV2(), baseV1()
			if tt.v2 != nil {
				tt.v2(in)
			}
			if tt.v1 != nil {
				tt.v1(want)
			}
			if tt.annotation != "" {
				if want.Annotations == nil {
					want.Annotations = map[string]string{}
				}
				want.Annotations[AnnotationV2Data] = tt.annotation
			}
			got := toV1(g, in)
			if tt.annotation == "" {
				g.Expect(got.Annotations).NotTo(HaveKey(AnnotationV2Data), "nothing is lost, so no annotation")
			} else {
				g.Expect(got.Annotations).To(HaveKeyWithValue(AnnotationV2Data, tt.annotation))
			}
			expectSame(g, got, want)
			g.Expect(toV1(g, in)).To(Equal(got), "conversion is deterministic")
			expectRoundTrips(g, in, got)
		})
	}
}

// TestConvertToV2V1EditsWin edits a v1 object that came from a v2 object v1
// cannot say entirely, as kubectl edit through v1 would.
func TestConvertToV2V1EditsWin(t *testing.T) {
	// v1 shows windows 1 and 2 as its 0 and 1, and intervalMint 1.
	lossy := func() *v2.TDSet {
		o := baseV2()
		o.Spec.Windows = []v2.Window{
			{Days: []v2.Weekday{"Sat", "Sun"}, Start: "10:00", End: "14:00", Replicas: 6},
			{Start: "09:00", End: "17:00", Replicas: 3},
			{Start: "19:00", End: "00:00", Replicas: 1},
		}
		o.Spec.ResyncInterval = &metav1.Duration{Duration: 90 * time.Second}
		o.Spec.Exceptions = []v2.Exception{{Date: "2026-12-25", Replicas: 0}}
		o.Spec.Override = &v2.Override{Replicas: 5, Until: untilTime}
		o.Spec.Autoscaling = &v2.Autoscaling{MaxReplicas: 10}
		o.Spec.ScaleUpLeadTime = &metav1.Duration{Duration: 2 * time.Minute}
		o.Status.ActiveRule = "window 19:00-00:00"
		o.Status.ActiveWindow = ptr.To[int32](2)
		return o
	}
	hourly := func(o *v2.TDSet, windows ...v2.Window) {
		o.Spec.Windows = windows
	}
	tests := []struct {
		name string
		edit func(*TDSet)
		want func(*v2.TDSet) // edits lossy()
		// kept: nothing of the annotation is applied, and it stays.
		kept bool
	}{
		{name: "unchanged, everything comes back"},
		{
			name: "defaultReplica edited, the windows come back",
			edit: func(o *TDSet) { o.Spec.DefaultReplica = 7 },
			want: func(o *v2.TDSet) { o.Spec.DefaultReplicas = 7 },
		},
		{
			name: "activeWindow edited, renumbered for the full list",
			edit: func(o *TDSet) { o.Status.ActiveWindow = ptr.To[int32](0) },
			want: func(o *v2.TDSet) { o.Status.ActiveWindow = ptr.To[int32](1) },
		},
		// Applying v1's windows would drop the Sat-Sun window v1 cannot
		// show: the annotation is kept unapplied, for the webhook to refuse.
		{
			name: "window replica edited, the annotation is kept",
			edit: func(o *TDSet) { o.Spec.SchedulingConfig[0].Replica = 9 },
			kept: true,
		},
		{
			name: "window added, the annotation is kept",
			edit: func(o *TDSet) {
				o.Spec.SchedulingConfig = append(o.Spec.SchedulingConfig, SchedulingConfig{StartTime: 6, EndTime: 8, Replica: 2})
			},
			kept: true,
		},
		{
			name: "windows removed, the annotation is kept",
			edit: func(o *TDSet) { o.Spec.SchedulingConfig = nil; o.Status.ActiveWindow = nil },
			kept: true,
		},
		{
			name: "windows edited in both, they come back",
			edit: func(o *TDSet) {
				o.Spec.SchedulingConfig[0].Replica = 9
				d, err := decodeV2Data(o.Annotations[AnnotationV2Data])
				if err != nil {
					panic(err)
				}
				d.Windows[1].Replicas = 9
				raw, err := json.Marshal(&d)
				if err != nil {
					panic(err)
				}
				o.Annotations[AnnotationV2Data] = string(raw)
			},
			want: func(o *v2.TDSet) { o.Spec.Windows[1].Replicas = 9 },
		},
		{
			name: "intervalMint edited wins",
			edit: func(o *TDSet) { o.Spec.IntervalMint = 5 },
			want: func(o *v2.TDSet) { o.Spec.ResyncInterval = &metav1.Duration{Duration: 5 * time.Minute} },
		},
		{
			name: "intervalMint removed wins",
			edit: func(o *TDSet) { o.Spec.IntervalMint = 0 },
			want: func(o *v2.TDSet) { o.Spec.ResyncInterval = nil },
		},
		{
			name: "annotation removed, v1 is all there is",
			edit: func(o *TDSet) { delete(o.Annotations, AnnotationV2Data) },
			want: func(o *v2.TDSet) {
				hourly(o, v2.Window{Start: "09:00", End: "17:00", Replicas: 3}, v2.Window{Start: "19:00", End: "00:00", Replicas: 1})
				o.Spec.ResyncInterval = &metav1.Duration{Duration: time.Minute}
				o.Spec.Exceptions, o.Spec.Override, o.Spec.Autoscaling, o.Spec.ScaleUpLeadTime = nil, nil, nil, nil
				o.Status.ActiveRule = ""
				o.Status.ActiveWindow = ptr.To[int32](1)
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := toV1(g, lossy())
			g.Expect(obj.Spec.SchedulingConfig).To(Equal([]SchedulingConfig{{StartTime: 9, EndTime: 17, Replica: 3}, {StartTime: 19, EndTime: 0, Replica: 1}}))
			g.Expect(obj.Spec.IntervalMint).To(Equal(int32(1)))
			g.Expect(obj.Status.ActiveWindow).To(Equal(ptr.To[int32](1)))
			if tt.edit != nil {
				tt.edit(obj)
			}
			got := toV2(g, obj)
			if tt.kept {
				raw := obj.Annotations[AnnotationV2Data]
				g.Expect(got.Annotations).To(Equal(map[string]string{"team": "shop", AnnotationV2Data: raw}))
				plain := obj.DeepCopy()
				delete(plain.Annotations, AnnotationV2Data)
				want := toV2(g, plain)
				want.Annotations[AnnotationV2Data] = raw
				expectSame(g, got, want)
				g.Expect(V2DataProblem(got)).To(MatchError(And(
					ContainSubstring("would drop the windows v1 cannot show"), ContainSubstring("through schedule.rs/v2"))))
				return
			}
			want := lossy()
			if tt.want != nil {
				tt.want(want)
			}
			g.Expect(got.Annotations).To(Equal(map[string]string{"team": "shop"}))
			expectSame(g, got, want)
			g.Expect(V2DataProblem(got)).To(Succeed())
		})
	}
}

// An annotation that does not decode strictly is applied not at all and
// kept on the v2 object, where V2DataProblem says why.
func TestConvertToV2KeepsMalformedAnnotation(t *testing.T) {
	huge := `{"activeRule":"` + strings.Repeat("x", MaxV2DataBytes) + `"}`
	for _, tt := range []struct{ value, problem string }{
		{"", "unexpected end of JSON input"},
		{"{", "unexpected end of JSON input"},
		{"not json", "invalid character"},
		{"[]", "cannot unmarshal array"},
		{"42", "cannot unmarshal number"},
		{`"windows"`, "cannot unmarshal string"},
		{`{"windows":"09:00"}`, "cannot unmarshal string"},
		{`{"resyncInterval":"forever"}`, "invalid duration"},
		{`{"override":{"replicas":1,"until":"tomorrow"}}`, "cannot parse"},
		{`{"exceptions":[{"date":"2026-12-25","replicas":"none"}]}`, "cannot unmarshal string"},
		{`{"windows":[{"start":"09:30","end":"10:00","replicas":1}]`, "unexpected end of JSON input"},
		{`{"resyncIntervall":"1m"}`, `unknown field "resyncIntervall"`},
		{`{"ResyncInterval":"1ns"}`, `unknown field "ResyncInterval"`},
		{`{"scaleUpLeadTime":"1m","scaleUpLeadTime":"2m"}`, `duplicate field "scaleUpLeadTime"`},
		{`{"windows":[{"start":"09:30","end":"10:00","replicas":1,"day":"Mon"}]}`, `unknown field "windows[0].day"`},
		{`{} {}`, "invalid character"},
		{huge, fmt.Sprintf("%d bytes, more than %d", len(huge), MaxV2DataBytes)},
	} {
		t.Run(tt.value[:min(len(tt.value), 60)], func(t *testing.T) {
			g := NewWithT(t)
			plain := baseV1()
			obj := plain.DeepCopy()
			obj.Annotations[AnnotationV2Data] = tt.value
			got := toV2(g, obj)
			want := toV2(g, plain)
			want.Annotations[AnnotationV2Data] = tt.value
			expectSame(g, got, want)
			g.Expect(V2DataProblem(got)).To(MatchError(And(
				HavePrefix("metadata.annotations[schedule.rs/v2-data]: "), ContainSubstring(tt.problem), ContainSubstring("through schedule.rs/v2"))))
		})
	}
}

// Strictly decoded, an annotation is applied whatever its values: the
// webhook holds the result to v2's rules.
func TestConvertToV2AppliesValuesOutOfBounds(t *testing.T) {
	g := NewWithT(t)
	obj := baseV1()
	obj.Spec.IntervalMint = 1 // what v1 shows for 1ns
	obj.Annotations[AnnotationV2Data] = `{"resyncInterval":"1ns"}`
	got := toV2(g, obj)
	g.Expect(got.Spec.ResyncInterval).To(Equal(&metav1.Duration{Duration: time.Nanosecond}))
	g.Expect(got.Annotations).NotTo(HaveKey(AnnotationV2Data))
	g.Expect(V2DataProblem(got)).To(Succeed())
	g.Expect(v2.Validate(got).ToAggregate()).To(MatchError(ContainSubstring("resyncInterval must be between 1m and 24h")))
}

// A v2 object's own value of the annotation is named as such.
func TestV2DataProblemOnV2(t *testing.T) {
	g := NewWithT(t)
	o := baseV2()
	o.Annotations[AnnotationV2Data] = `{}`
	g.Expect(V2DataProblem(o)).To(MatchError(ContainSubstring("is schedule.rs/v1's record of the v2-only fields, not part of a v2 object")))
	g.Expect(V2DataProblem(baseV2())).To(Succeed())
}

func TestConvertRejectsOtherHub(t *testing.T) {
	g := NewWithT(t)
	g.Expect(baseV1().ConvertTo(&otherHub{})).To(MatchError(ContainSubstring("not *v2.TDSet")))
	g.Expect((&TDSet{}).ConvertFrom(&otherHub{})).To(MatchError(ContainSubstring("not *v2.TDSet")))
}

// otherHub is a hub of another type.
type otherHub struct{ v2.TDSet }

func TestConvertKeepsTypeMetaAndSharesNothing(t *testing.T) {
	g := NewWithT(t)
	src := baseV1()
	src.Annotations[AnnotationV2Data] = `{"exceptions":[{"date":"2026-12-25","replicas":0}],"autoscaling":{"maxReplicas":4}}`
	hub := &v2.TDSet{TypeMeta: metav1.TypeMeta{APIVersion: "schedule.rs/v2", Kind: "TDSet"}}
	g.Expect(src.ConvertTo(hub)).To(Succeed())
	g.Expect(hub.TypeMeta).To(Equal(metav1.TypeMeta{APIVersion: "schedule.rs/v2", Kind: "TDSet"}))

	back := &TDSet{TypeMeta: metav1.TypeMeta{APIVersion: "schedule.rs/v1", Kind: "TDSet"}}
	g.Expect(back.ConvertFrom(hub)).To(Succeed())
	g.Expect(back.TypeMeta).To(Equal(metav1.TypeMeta{APIVersion: "schedule.rs/v1", Kind: "TDSet"}))

	// Writing through the outputs must not reach the inputs.
	want := src.DeepCopy()
	hub.Labels["app"] = "x"
	hub.Spec.Windows[0].Replicas = 99
	hub.Spec.Service.Port = 1
	*hub.Status.CurrentReplicas = 99
	hub.Status.Conditions[0].Reason = "x"
	hub.Spec.PodTemplate.Tolerations[0].Key = "x"
	hub.Spec.PodTemplate.NodeSelector["pool"] = "x"
	g.Expect(src).To(Equal(want))
	wantHub := hub.DeepCopy()
	back.Annotations["team"] = "x"
	back.Spec.SchedulingConfig[0].Replica = 98
	*back.Status.NextReplicas = 98
	back.Spec.PodTemplate.Labels["team"] = "x"
	g.Expect(hub).To(Equal(wantHub))
}

func TestParseHour(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int32
		ok   bool
	}{
		{"00:00", 0, true},
		{"09:00", 9, true},
		{"23:00", 23, true},
		{"24:00", 24, true}, // invalid in both versions; kept so it converts back to itself
		{"-1:00", -1, true},
		{"-01:00", 0, false},
		{"9:00", 0, false},
		{"009:00", 0, false},
		{"+9:00", 0, false},
		{"09:30", 0, false},
		{"09:00:00", 0, false},
		{"", 0, false},
		{":00", 0, false},
		{"2147483648:00", 0, false},
		{"2147483647:00", math.MaxInt32, true},
	} {
		g := NewWithT(t)
		got, ok := parseHour(tt.in)
		g.Expect(ok).To(Equal(tt.ok), tt.in)
		g.Expect(got).To(Equal(tt.want), tt.in)
		if ok {
			g.Expect(formatHour(got)).To(Equal(tt.in))
		}
	}
}

func TestIntervalMintFor(t *testing.T) {
	for _, tt := range []struct {
		in    *metav1.Duration
		want  int32
		exact bool
	}{
		{nil, 0, true},
		{&metav1.Duration{Duration: time.Minute}, 1, true},
		{&metav1.Duration{Duration: 24 * time.Hour}, 1440, true},
		{&metav1.Duration{Duration: 24*time.Hour + time.Minute}, 1440, false},
		{&metav1.Duration{Duration: 90 * time.Second}, 1, false},
		{&metav1.Duration{Duration: time.Nanosecond}, 1, false},
		{&metav1.Duration{Duration: 0}, 0, false},
		{&metav1.Duration{Duration: -5 * time.Minute}, 0, false},
		{&metav1.Duration{Duration: math.MaxInt64}, 1440, false},
	} {
		g := NewWithT(t)
		got, exact := intervalMintFor(tt.in)
		g.Expect(got).To(Equal(tt.want), "%v", tt.in)
		g.Expect(exact).To(Equal(tt.exact), "%v", tt.in)
	}
}

// FuzzRoundTripV2 checks v2 -> v1 -> v2 on arbitrary v2 objects, and
// v1 -> v2 -> v1 on what they convert to.
func FuzzRoundTripV2(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		g := NewWithT(t)
		in := genV2(newRand(data))
		obj := toV1(g, in)
		raw, has := obj.Annotations[AnnotationV2Data]
		g.Expect(has).To(Equal(v1Loses(in)), "annotation %q", raw)
		if has {
			var d v2Data
			g.Expect(json.Unmarshal([]byte(raw), &d)).To(Succeed())
			g.Expect(d.empty()).To(BeFalse())
			again, err := json.Marshal(&d)
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(string(again)).To(Equal(raw), "the encoding is canonical")
		}
		g.Expect(toV1(g, in)).To(Equal(obj), "conversion is deterministic")
		expectRoundTrips(g, in, obj)
	})
}

// FuzzRoundTripV1 checks v1 -> v2 -> v1 on arbitrary v1 objects without
// the annotation, and that a malformed annotation is kept, not applied.
func FuzzRoundTripV1(f *testing.F) {
	addSeeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		g := NewWithT(t)
		r := newRand(data)
		in := genV1(r)
		hub := toV2(g, in)
		g.Expect(hub.Annotations).NotTo(HaveKey(AnnotationV2Data))
		back := toV1(g, hub)
		g.Expect(back.Annotations).NotTo(HaveKey(AnnotationV2Data), "nothing is lost, so no annotation")
		expectSame(g, back, in)

		bad := in.DeepCopy()
		value := genAnnotationValue(r)
		if bad.Annotations == nil {
			bad.Annotations = map[string]string{}
		}
		bad.Annotations[AnnotationV2Data] = value
		d, err := decodeV2Data(value)
		if err == nil && !d.empty() {
			return // well-formed: it has a meaning, which FuzzRoundTripV2 covers
		}
		got := toV2(g, bad)
		if err == nil {
			expectSame(g, got, hub) // nothing to apply, nothing lost
			return
		}
		// Malformed: kept, not applied, and named.
		want := hub.DeepCopy()
		if want.Annotations == nil {
			want.Annotations = map[string]string{}
		}
		want.Annotations[AnnotationV2Data] = value
		expectSame(g, got, want)
		g.Expect(V2DataProblem(got)).To(MatchError(ContainSubstring("through schedule.rs/v2")))
	})
}

// addSeeds adds the seed corpus both fuzz tests share: empty input (all
// zero draws from the fallback generator), a few fixed byte strings, and
// inputs that steer the first draws.
func addSeeds(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0})
	f.Add([]byte("tdset"))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	for seed := range uint64(64) {
		f.Add(binary.LittleEndian.AppendUint64(nil, seed*0x9e3779b97f4a7c15))
	}
}

// v1Loses says, independently of the conversion's code, whether v1 cannot
// say all of o.
func v1Loses(o *v2.TDSet) bool {
	if _, ok := o.Annotations[AnnotationV2Data]; ok {
		return true
	}
	for _, w := range o.Spec.Windows {
		if len(w.Days) > 0 || w.EndDay != "" || !isV1Hour(w.Start) || !isV1Hour(w.End) {
			return true
		}
	}
	if r := o.Spec.ResyncInterval; r != nil && (r.Duration%time.Minute != 0 || r.Duration < time.Minute || r.Duration > 24*time.Hour) {
		return true
	}
	return len(o.Spec.Exceptions) > 0 || len(o.Spec.Calendars) > 0 || o.Spec.Override != nil || o.Spec.Autoscaling != nil ||
		o.Spec.ScaleUpLeadTime != nil || o.Status.ActiveRule != "" ||
		o.Spec.ScaleTargetRef != nil || o.Spec.OnDelete != "" || o.Status.Target != nil
}

var v1HourRE = regexp.MustCompile(`^(-?)([0-9]+):00$`)

// isV1Hour says whether s is what fmt's %02d writes for an int32, then ":00".
func isV1Hour(s string) bool {
	m := v1HourRE.FindStringSubmatch(s)
	if m == nil {
		return false
	}
	n, err := strconv.ParseInt(m[1]+m[2], 10, 32)
	if err != nil {
		return false
	}
	if m[1] == "-" {
		return n < 0 && !strings.HasPrefix(m[2], "0")
	}
	return len(m[2]) == 2 || (len(m[2]) > 2 && m[2][0] != '0')
}

// byteSource draws the fuzz input 8 bytes at a time, so that the fuzzer
// steers the first choices, then falls back to a PCG seeded from the input.
type byteSource struct {
	data []byte
	rest rand.Source
}

func (s *byteSource) Uint64() uint64 {
	if len(s.data) == 0 {
		return s.rest.Uint64()
	}
	var b [8]byte
	n := copy(b[:], s.data)
	s.data = s.data[n:]
	return binary.LittleEndian.Uint64(b[:])
}

// newRand returns a generator determined by data alone.
func newRand(data []byte) *rand.Rand {
	h := fnv.New64a()
	h.Write(data)
	return rand.New(&byteSource{data: data, rest: rand.NewPCG(h.Sum64(), uint64(len(data)))})
}

func oneIn(r *rand.Rand, n int) bool { return r.IntN(n) == 0 }

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.IntN(len(xs))] }

// genString is valid UTF-8, as every string of an object the API server
// reads from JSON is; it includes characters JSON escapes.
func genString(r *rand.Rand) string {
	const alphabet = "abcz09-:./ \"\\<>&\u00e9\u2028\U0001F600"
	runes := []rune(alphabet)
	var b strings.Builder
	for range r.IntN(8) {
		b.WriteRune(runes[r.IntN(len(runes))])
	}
	return b.String()
}

func genInt32(r *rand.Rand) int32 {
	switch r.IntN(6) {
	case 0:
		return pick[int32](r, 0, -1, 1, math.MaxInt32, math.MinInt32)
	case 1:
		return int32(r.Uint32())
	default:
		return int32(r.IntN(12))
	}
}

func genInt32Ptr(r *rand.Rand) *int32 {
	if oneIn(r, 3) {
		return nil
	}
	return ptr.To(genInt32(r))
}

// genTime has the one-second precision of the API's JSON, and a year JSON
// can hold.
func genTime(r *rand.Rand) metav1.Time {
	if oneIn(r, 8) {
		return metav1.Time{}
	}
	return metav1.Unix(r.Int64N(1<<35), 0)
}

func genTimePtr(r *rand.Rand) *metav1.Time {
	if oneIn(r, 3) {
		return nil
	}
	return ptr.To(genTime(r))
}

func genDuration(r *rand.Rand) *metav1.Duration {
	var d time.Duration
	switch r.IntN(8) {
	case 0:
		return nil
	case 1, 2:
		d = time.Duration(1+r.IntN(1440)) * time.Minute
	case 3:
		d = time.Duration(r.IntN(3000)-10) * time.Minute
	case 4:
		d = time.Duration(r.IntN(200_000)) * time.Second
	case 5:
		d = pick[time.Duration](r, 0, 1, -1, math.MaxInt64, math.MinInt64, 24*time.Hour+1)
	default:
		d = time.Duration(r.Int64())
	}
	return &metav1.Duration{Duration: d}
}

func genHHMM(r *rand.Rand) string {
	switch r.IntN(8) {
	case 0:
		return fmt.Sprintf("%02d:%02d", r.IntN(24), r.IntN(60))
	case 1:
		return pick(r, "24:00", "9:00", "-1:00", "-01:00", "+1:00", "007:00", "", "23:59", "12:00:00")
	case 2:
		return formatHour(genInt32(r))
	case 3:
		return genString(r)
	default:
		return formatHour(int32(r.IntN(24)))
	}
}

func genWindow(r *rand.Rand) v2.Window {
	w := v2.Window{Start: genHHMM(r), End: genHHMM(r), Replicas: genInt32(r)}
	switch r.IntN(6) {
	case 0:
		w.Days = []v2.Weekday{}
	case 1:
		days := []v2.Weekday{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
		for _, i := range r.Perm(7)[:1+r.IntN(7)] {
			w.Days = append(w.Days, days[i])
		}
	case 2:
		w.Days = []v2.Weekday{v2.Weekday(genString(r))}
	}
	switch r.IntN(6) {
	case 0:
		w.EndDay = pick[v2.Weekday](r, "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
	case 1:
		w.EndDay = v2.Weekday(genString(r))
	}
	return w
}

func genMeta(r *rand.Rand) metav1.ObjectMeta {
	m := metav1.ObjectMeta{
		Name:              pick(r, "web", "a", genString(r)),
		Namespace:         pick(r, "", "shop"),
		UID:               types.UID(genString(r)),
		ResourceVersion:   genString(r),
		Generation:        r.Int64N(100),
		CreationTimestamp: genTime(r),
	}
	if !oneIn(r, 3) {
		m.Labels = map[string]string{"app": genString(r)}
	}
	switch r.IntN(4) {
	case 0:
	case 1:
		m.Annotations = map[string]string{}
	default:
		m.Annotations = map[string]string{}
		for range 1 + r.IntN(3) {
			m.Annotations[pick(r, "team", "example.com/"+genString(r), "schedule.rs/other")] = genString(r)
		}
	}
	return m
}

func genConditions(r *rand.Rand) []metav1.Condition {
	var cs []metav1.Condition
	for _, t := range []string{"Ready", "Scheduled", "Suspended"}[:r.IntN(4)] {
		cs = append(cs, metav1.Condition{
			Type:               t,
			Status:             pick(r, metav1.ConditionTrue, metav1.ConditionFalse, metav1.ConditionUnknown),
			ObservedGeneration: r.Int64N(100),
			LastTransitionTime: genTime(r),
			Reason:             genString(r),
			Message:            genString(r),
		})
	}
	return cs
}

func genV2(r *rand.Rand) *v2.TDSet {
	o := &v2.TDSet{ObjectMeta: genMeta(r)}
	if oneIn(r, 6) {
		if o.Annotations == nil {
			o.Annotations = map[string]string{}
		}
		o.Annotations[AnnotationV2Data] = genAnnotationValue(r)
	}
	o.Spec = v2.TDSetSpec{
		TimeZone:        pick(r, "", "UTC", "Europe/Berlin", genString(r)),
		Container:       v2.ContainerSpec{Image: genString(r), Port: genInt32(r)},
		DefaultReplicas: genInt32(r),
		Suspend:         oneIn(r, 2),
		ResyncInterval:  genDuration(r),
	}
	if oneIn(r, 2) {
		o.Spec.Service = &v2.ServiceSpec{Port: genInt32(r)}
	}
	// Most objects get only expressible windows, so that the lossless
	// case is common too.
	lossless := oneIn(r, 2)
	switch r.IntN(5) {
	case 0:
	case 1:
		o.Spec.Windows = []v2.Window{}
	default:
		for range 1 + r.IntN(5) {
			w := genWindow(r)
			if lossless {
				w.Days, w.Start, w.End = nil, formatHour(int32(r.IntN(24))), formatHour(int32(r.IntN(24)))
			}
			o.Spec.Windows = append(o.Spec.Windows, w)
		}
	}
	if !lossless || oneIn(r, 4) {
		switch r.IntN(3) {
		case 0:
			o.Spec.Exceptions = []v2.Exception{}
		case 1:
			for range 1 + r.IntN(3) {
				o.Spec.Exceptions = append(o.Spec.Exceptions, v2.Exception{Date: pick(r, "2026-12-25", genString(r)), Replicas: genInt32(r)})
			}
		}
		if oneIn(r, 3) {
			o.Spec.Override = &v2.Override{Replicas: genInt32(r), Until: genTime(r)}
		}
		if oneIn(r, 3) {
			o.Spec.Autoscaling = &v2.Autoscaling{MaxReplicas: genInt32(r), TargetCPUUtilizationPercentage: genInt32Ptr(r)}
			if oneIn(r, 3) {
				o.Spec.Autoscaling.HPARef = &v2.HPARef{Name: genString(r)}
			}
		}
		if oneIn(r, 3) {
			o.Spec.ScaleUpLeadTime = genDuration(r)
		}
		if oneIn(r, 3) {
			for range 1 + r.IntN(3) {
				o.Spec.Calendars = append(o.Spec.Calendars, v2.CalendarRef{Kind: pick(r, "", v2.CalendarKindCluster, v2.CalendarKind(genString(r))), Name: genString(r), Replicas: genInt32Ptr(r)})
			}
		}
		if oneIn(r, 3) {
			o.Status.ActiveRule = genString(r)
		}
		if oneIn(r, 3) {
			// A scale target replaces the container; the generator also
			// draws both, which conversion keeps as it is too.
			if oneIn(r, 2) {
				o.Spec.Container = v2.ContainerSpec{}
			}
			o.Spec.ScaleTargetRef = &v2.ScaleTargetRef{APIVersion: pick(r, "apps/v1", genString(r)), Kind: pick(r, "Deployment", genString(r)), Name: genString(r)}
			o.Spec.OnDelete = pick(r, "", v2.OnDeleteKeep, v2.OnDeleteRestore, v2.OnDeletePolicy(genString(r)))
			if oneIn(r, 2) {
				o.Status.Target = &v2.TargetStatus{APIVersion: genString(r), Kind: genString(r), Name: genString(r), Replicas: genInt32Ptr(r), ObservedReplicas: genInt32Ptr(r), OriginalReplicas: genInt32Ptr(r)}
				if oneIn(r, 2) {
					o.Status.Target.Autoscaler = &v2.AutoscalerStatus{Name: genString(r), MinReplicas: genInt32Ptr(r), MaxReplicas: genInt32Ptr(r),
						OriginalMinReplicas: genInt32Ptr(r), OriginalMaxReplicas: genInt32Ptr(r)}
				}
			}
		}
	}
	o.Spec.PodTemplate = genPodTemplate(r)
	o.Status.ObservedGeneration = r.Int64N(100)
	o.Status.CurrentReplicas = genInt32Ptr(r)
	o.Status.AvailableReplicas = genInt32Ptr(r)
	if !oneIn(r, 3) {
		o.Status.ActiveWindow = ptr.To(int32(r.IntN(len(o.Spec.Windows)+2) - 1))
	} else if oneIn(r, 4) {
		o.Status.ActiveWindow = ptr.To(genInt32(r))
	}
	o.Status.NextTransitionTime = genTimePtr(r)
	o.Status.NextReplicas = genInt32Ptr(r)
	o.Status.Conditions = genConditions(r)
	return o
}

// genV1 stays within v1's schema where a value outside it cannot come back:
// intervalMint is 0 to 1440 (v2 keeps other counts in the annotation).
// Hours outside 0-23 convert back, so they are drawn too.
func genV1(r *rand.Rand) *TDSet {
	o := &TDSet{ObjectMeta: genMeta(r)}
	o.Spec = TDSetSpec{
		Container:      ContainerSpec{Image: genString(r), Port: genInt32(r)},
		DefaultReplica: genInt32(r),
		TimeZone:       pick(r, "", "UTC", "Europe/Berlin", genString(r)),
		Suspend:        oneIn(r, 2),
	}
	if !oneIn(r, 3) {
		o.Spec.IntervalMint = int32(r.IntN(1441))
	}
	if oneIn(r, 2) {
		o.Spec.Service = &ServiceSpec{Port: genInt32(r)}
	}
	o.Spec.PodTemplate = genPodTemplate(r)
	switch r.IntN(5) {
	case 0:
	case 1:
		o.Spec.SchedulingConfig = []SchedulingConfig{}
	default:
		hour := func() int32 {
			if oneIn(r, 8) {
				return genInt32(r)
			}
			return int32(r.IntN(24))
		}
		for range 1 + r.IntN(6) {
			o.Spec.SchedulingConfig = append(o.Spec.SchedulingConfig, SchedulingConfig{StartTime: hour(), EndTime: hour(), Replica: genInt32(r)})
		}
	}
	o.Status = TDSetStatus{
		ObservedGeneration: r.Int64N(100),
		DesiredReplicas:    genInt32Ptr(r),
		AvailableReplicas:  genInt32Ptr(r),
		ActiveWindow:       genInt32Ptr(r),
		NextTransitionTime: genTimePtr(r),
		NextReplicas:       genInt32Ptr(r),
		Conditions:         genConditions(r),
	}
	return o
}

// genPodTemplate is nil or a spec.podTemplate filled at random: both
// versions carry it whole.
func genPodTemplate(r *rand.Rand) *shared.PodTemplate {
	if oneIn(r, 2) {
		return nil
	}
	pt := &shared.PodTemplate{}
	randfill.NewWithSeed(r.Int64()).NilChance(0.3).NumElements(0, 2).Fill(pt)
	return pt
}

// genAnnotationValue is a value of AnnotationV2Data: one a conversion
// wrote, a damaged one, or one a user typed.
func genAnnotationValue(r *rand.Rand) string {
	written := func() string {
		o := &TDSet{}
		if err := o.ConvertFrom(genV2(r)); err != nil {
			panic(err)
		}
		return o.Annotations[AnnotationV2Data]
	}
	switch r.IntN(5) {
	case 0:
		return written()
	case 1:
		v := []rune(written()) // cut between characters: strings from JSON are UTF-8
		return string(v[:r.IntN(len(v)+1)])
	case 2:
		return pick(r, "", "{}", "null", "[]", "{", `{"windows":1}`, `{"resyncInterval":"x"}`)
	default:
		return genString(r)
	}
}
