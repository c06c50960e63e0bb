package tdset_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/samples"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// How a create is answered.
const (
	accepted = iota
	// invalid: the CRD's schema or CEL rules reject it (422).
	invalid
	// denied: the validating webhook rejects it (403).
	denied
)

// objectName turns a test case's name into an object name.
func objectName(s string) string {
	s = strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		case r == '\'':
			return -1
		}
		return '-'
	}, s)
	return strings.Trim(s, "-")
}

// expectAnswer checks how the API server answered a create.
func expectAnswer(g Gomega, err error, answer int, message string) {
	switch answer {
	case accepted:
		g.Expect(err).NotTo(HaveOccurred())
		return
	case invalid:
		g.Expect(apierrors.IsInvalid(err)).To(BeTrue(), "rejected by the schema, got %v", err)
	case denied:
		g.Expect(apierrors.IsForbidden(err)).To(BeTrue(), "denied by the webhook, got %v", err)
		g.Expect(err.Error()).To(ContainSubstring(`admission webhook "vtdset-v2.schedule.rs" denied the request`))
	}
	g.Expect(err.Error()).To(ContainSubstring(message))
}

// windowsEvery are n windows of 20 minutes each, every day from midnight.
func windowsEvery(n int) []schedulev2.Window {
	ws := make([]schedulev2.Window, n)
	for i := range ws {
		from, to := i*20, (i+1)*20
		ws[i] = builders.Window(fmt.Sprintf("%02d:%02d", from/60, from%60), fmt.Sprintf("%02d:%02d", to/60%24, to%60), 1)
	}
	return ws
}

func TestAdmission(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	weekdays := []schedulev2.Weekday{"Mon", "Tue", "Wed", "Thu", "Fri"}
	windows := func(ws ...schedulev2.Window) func(*builders.TDSetWrapper) {
		return func(w *builders.TDSetWrapper) { w.Windows(ws...) }
	}
	win := builders.Window
	for _, tc := range []struct {
		name    string
		objName string // object name, when it matters
		mutate  func(*builders.TDSetWrapper)
		answer  int
		message string
	}{
		{name: "the original's schedule", mutate: func(*builders.TDSetWrapper) {}},
		{name: "the v2 sample's schedule", mutate: func(w *builders.TDSetWrapper) {
			w.TimeZone("Europe/Berlin").DefaultReplicas(2).Windows(win("08:30", "18:00", 6, weekdays...), win("10:00", "14:00", 3, "Sat")).
				Exception("2026-12-25", 1).ScaleUpLeadTime(2 * time.Minute).ResyncInterval(30 * time.Minute)
		}},
		{name: "adjacent windows", mutate: windows(win("09:00", "17:00", 5), win("17:00", "09:00", 1))},
		{name: "23-00 next to 00-01", mutate: windows(win("23:00", "00:00", 5), win("00:00", "01:00", 1))},
		{name: "the same hours on other days", mutate: windows(win("08:30", "18:00", 5, "Mon"), win("08:30", "18:00", 3, "Tue", "Sun"))},
		{name: "a Friday night and the Saturday after it", mutate: windows(win("22:00", "02:00", 5, "Fri"), win("02:00", "06:00", 3, "Sat"))},
		{name: "no windows at all", mutate: func(w *builders.TDSetWrapper) { w.Windows().DefaultReplicas(0) }},
		{name: "64 windows", mutate: windows(windowsEvery(64)...)},
		{name: "29 February of a leap year", mutate: func(w *builders.TDSetWrapper) { w.Exception("2028-02-29", 1) }},
		{name: "an override until later", mutate: func(w *builders.TDSetWrapper) { w.Override(8, farFuture) }},
		{name: "autoscaling above every count", mutate: func(w *builders.TDSetWrapper) { w.Autoscaling(5).Exception("2026-12-25", 1).Override(5, farFuture) }},
		{name: "the longest lead time", mutate: func(w *builders.TDSetWrapper) { w.ScaleUpLeadTime(24 * time.Hour) }},
		{name: "the shortest resync", mutate: func(w *builders.TDSetWrapper) { w.ResyncInterval(time.Minute) }},
		{name: "no service on a name that is no DNS label", objName: "9to5.ok", mutate: func(*builders.TDSetWrapper) {}},

		// What the webhook rejects, as pkg/schedule and the Validator say it.
		{name: "overlap on a weekday", mutate: windows(win("08:30", "18:00", 5, "Mon"), win("17:00", "20:00", 3, "Mon")),
			answer: denied, message: "windows Mon 08:30-18:00 and Mon 17:00-20:00 overlap on Mon"},
		{name: "overlap on some of the days", mutate: windows(win("08:30", "18:00", 5, weekdays...), win("17:00", "20:00", 3, "Fri", "Sat")),
			answer: denied, message: "windows Mon-Fri 08:30-18:00 and Fri,Sat 17:00-20:00 overlap on Fri"},
		{name: "overlap named in list order", mutate: windows(win("01:00", "07:00", 2), win("09:00", "17:00", 5), win("16:00", "18:00", 1)),
			answer: denied, message: "windows every day 09:00-17:00 and every day 16:00-18:00 overlap on every day"},
		{name: "wrap-around overlaps the next day", mutate: windows(win("22:00", "02:00", 5, "Fri"), win("01:00", "03:00", 3, "Sat")),
			answer: denied, message: "windows Fri 22:00-02:00 and Sat 01:00-03:00 overlap on Sat"},
		{name: "19-00 overlaps 23-01", mutate: windows(win("19:00", "00:00", 5), win("23:00", "01:00", 1)),
			answer: denied, message: "windows every day 19:00-00:00 and every day 23:00-01:00 overlap on every day"},
		{name: "duplicate windows", mutate: windows(win("01:00", "02:00", 5), win("01:00", "02:00", 5)),
			answer: denied, message: "windows every day 01:00-02:00 and every day 01:00-02:00 overlap"},
		{name: "an unknown time zone", mutate: func(w *builders.TDSetWrapper) { w.TimeZone("Mars/Olympus_Mons") },
			answer: denied, message: `spec.timeZone: unknown time zone "Mars/Olympus_Mons"`},
		{name: "the controller's own time zone", mutate: func(w *builders.TDSetWrapper) { w.TimeZone("Local") },
			answer: denied, message: `spec.timeZone: "Local" is the controller's own time zone`},
		{name: "a repeated exception date", mutate: func(w *builders.TDSetWrapper) {
			w.Exception("2026-12-25", 1).Exception("2026-12-26", 2).Exception("2026-12-25", 3)
		},
			answer: denied, message: "exception date 2026-12-25 appears twice"},
		{name: "a date that does not exist", mutate: func(w *builders.TDSetWrapper) { w.Exception("2026-02-30", 1) },
			answer: denied, message: `spec.exceptions[0].date: invalid date "2026-02-30": no such day`},
		{name: "29 February of another year", mutate: func(w *builders.TDSetWrapper) { w.Exception("2027-02-29", 1) },
			answer: denied, message: `invalid date "2027-02-29": no such day`},
		{name: "an override that has ended", mutate: func(w *builders.TDSetWrapper) { w.Override(8, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)) },
			answer: denied, message: "spec.override.until 2020-01-01T00:00:00Z is in the past: an override applies until a future instant"},

		// What the CRD's schema and CEL rules reject.
		{name: "start equals end", mutate: windows(win("09:00", "09:00", 5)),
			answer: invalid, message: "a window's start and end must differ"},
		{name: "autoscaling with a count of 0", mutate: func(w *builders.TDSetWrapper) { w.Autoscaling(10).Windows(win("09:00", "17:00", 0)) },
			answer: invalid, message: "with spec.autoscaling, every replica count (defaultReplicas, windows, exceptions, override) must be at least 1"},
		{name: "autoscaling with defaultReplicas 0", mutate: func(w *builders.TDSetWrapper) { w.Autoscaling(10).DefaultReplicas(0) },
			answer: invalid, message: "with spec.autoscaling, every replica count"},
		{name: "autoscaling with an exception of 0", mutate: func(w *builders.TDSetWrapper) { w.Autoscaling(10).Exception("2026-12-25", 0) },
			answer: invalid, message: "with spec.autoscaling, every replica count"},
		{name: "maxReplicas below a window", mutate: func(w *builders.TDSetWrapper) { w.Autoscaling(4) },
			answer: invalid, message: "spec.autoscaling.maxReplicas must be at least every replica count of the schedule"},
		{name: "maxReplicas below the override", mutate: func(w *builders.TDSetWrapper) { w.Autoscaling(5).Override(6, farFuture) },
			answer: invalid, message: "spec.autoscaling.maxReplicas must be at least every replica count of the schedule"},
		{name: "maxReplicas 0", mutate: func(w *builders.TDSetWrapper) { w.Autoscaling(0) },
			answer: invalid, message: schedulev2.MessageMaxReplicasRequired},
		{name: "maxReplicas -1", mutate: func(w *builders.TDSetWrapper) { w.Autoscaling(-1) },
			answer: invalid, message: "spec.autoscaling.maxReplicas in body should be greater than or equal to 1"},
		{name: "a CPU target of 0", mutate: func(w *builders.TDSetWrapper) {
			w.Autoscaling(10).Spec.Autoscaling.TargetCPUUtilizationPercentage = ptr.To[int32](0)
		}, answer: invalid, message: "spec.autoscaling.targetCPUUtilizationPercentage in body should be greater than or equal to 1"},
		{name: "hour 24", mutate: windows(win("24:00", "02:00", 5)),
			answer: invalid, message: "spec.windows[0].start in body should match '^([01][0-9]|2[0-3]):[0-5][0-9]$'"},
		{name: "a time without its leading zero", mutate: windows(win("08:00", "9:30", 5)),
			answer: invalid, message: "spec.windows[0].end in body should match"},
		{name: "minute 60", mutate: windows(win("08:60", "09:30", 5)),
			answer: invalid, message: "spec.windows[0].start in body should match"},
		{name: "a weekday spelt out", mutate: windows(win("08:00", "09:00", 5, "Monday")),
			answer: invalid, message: `spec.windows[0].days[0]: Unsupported value: "Monday"`},
		{name: "a weekday twice", mutate: windows(win("08:00", "09:00", 5, "Mon", "Mon")),
			answer: invalid, message: `spec.windows[0].days[1]: Duplicate value: "Mon"`},
		{name: "a negative count", mutate: windows(win("08:00", "09:00", -1)),
			answer: invalid, message: "spec.windows[0].replicas in body should be greater than or equal to 0"},
		{name: "65 windows", mutate: windows(windowsEvery(65)...),
			answer: invalid, message: "spec.windows: Too many: 65: must have at most 64 items"},
		{name: "a lead time over a day", mutate: func(w *builders.TDSetWrapper) { w.ScaleUpLeadTime(25 * time.Hour) },
			answer: invalid, message: "scaleUpLeadTime must be between 0s and 24h"},
		{name: "a negative lead time", mutate: func(w *builders.TDSetWrapper) { w.ScaleUpLeadTime(-time.Minute) },
			answer: invalid, message: "scaleUpLeadTime must be between 0s and 24h"},
		{name: "resync under a minute", mutate: func(w *builders.TDSetWrapper) { w.ResyncInterval(30 * time.Second) },
			answer: invalid, message: "resyncInterval must be between 1m and 24h"},
		{name: "resync over a day", mutate: func(w *builders.TDSetWrapper) { w.ResyncInterval(25 * time.Hour) },
			answer: invalid, message: "resyncInterval must be between 1m and 24h"},
		{name: "month 13", mutate: func(w *builders.TDSetWrapper) { w.Exception("2026-13-01", 1) },
			answer: invalid, message: "spec.exceptions[0].date in body should match"},
		{name: "defaultReplicas -1", mutate: func(w *builders.TDSetWrapper) { w.DefaultReplicas(-1) },
			answer: invalid, message: "spec.defaultReplicas in body should be greater than or equal to 0"},
		{name: "port 65536", mutate: func(w *builders.TDSetWrapper) { w.Spec.Container.Port = 65536 },
			answer: invalid, message: "spec.container.port in body should be less than or equal to 65535"},
		{name: "no image", mutate: func(w *builders.TDSetWrapper) { w.Spec.Container.Image = "" },
			answer: invalid, message: "spec.container.image"},
		{name: "an empty time zone", mutate: func(w *builders.TDSetWrapper) { w.Spec.TimeZone = "" },
			answer: accepted},
		{name: "service on a name that is no DNS label", objName: "9to5", mutate: func(w *builders.TDSetWrapper) { w.ServicePort(80) },
			answer: invalid, message: "the name must be a DNS label"},

		// A scale target replaces the container: exactly one of them.
		{name: "a scale target", mutate: func(w *builders.TDSetWrapper) {
			w.ScaleTarget("apps/v1", "Deployment", "web").OnDelete(schedulev2.OnDeleteRestore)
		}, answer: accepted},
		{name: "a scale target of a custom resource at its longest", mutate: func(w *builders.TDSetWrapper) {
			w.ScaleTarget(strings.Repeat("a", 253)+"/v1alpha1", "M"+strings.Repeat("x", 62), strings.Repeat("n", 253))
		}, answer: accepted},
		{name: "a scale target beside a container", mutate: func(w *builders.TDSetWrapper) {
			w.Spec.ScaleTargetRef = &schedulev2.ScaleTargetRef{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
		}, answer: invalid, message: "exactly one of spec.container (a Deployment the TDSet creates) or spec.scaleTargetRef (a workload that already runs) must be set"},
		{name: "neither container nor scale target", mutate: func(w *builders.TDSetWrapper) { w.Spec.Container = schedulev2.ContainerSpec{} },
			answer: invalid, message: "exactly one of spec.container"},
		{name: "a scale target name over 253", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "Deployment", strings.Repeat("n", 254)) },
			answer: invalid, message: "spec.scaleTargetRef.name: Too long: may not be more than 253 bytes"},
		{name: "a scale target name with a slash", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "Deployment", "../web") },
			answer: invalid, message: "spec.scaleTargetRef.name in body should match"},
		{name: "a scale target kind over 63", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "D"+strings.Repeat("x", 63), "web") },
			answer: invalid, message: "spec.scaleTargetRef.kind: Too long: may not be more than 63 bytes"},
		{name: "a scale target kind in lower case", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "deployment", "web") },
			answer: invalid, message: "spec.scaleTargetRef.kind in body should match"},
		{name: "a scale target apiVersion without a version", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps", "Deployment", "web") },
			answer: invalid, message: "spec.scaleTargetRef.apiVersion in body should match"},
		{name: "a scale target apiVersion over 317", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget(strings.Repeat("a", 315)+"/v1", "Deployment", "web") },
			answer: invalid, message: "spec.scaleTargetRef.apiVersion: Too long: may not be more than 317 bytes"},
		{name: "a service with a scale target", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "Deployment", "web").ServicePort(80) },
			answer: invalid, message: "spec.service and spec.podTemplate describe the Deployment the TDSet creates"},
		{name: "autoscaling with a scale target", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "Deployment", "web").Autoscaling(10) },
			answer: invalid, message: schedulev2.MessageHPARefWithTarget},
		{name: "an hpaRef with a scale target", mutate: func(w *builders.TDSetWrapper) {
			w.ScaleTarget("apps/v1", "Deployment", "web").HPARef("web", 0).OnDelete(schedulev2.OnDeleteRestore)
		}, answer: accepted},
		{name: "an hpaRef with maxReplicas", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "Deployment", "web").HPARef("web", 10) },
			answer: accepted},
		{name: "an hpaRef with maxReplicas below a count", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "Deployment", "web").HPARef("web", 4) },
			answer: invalid, message: "spec.autoscaling.maxReplicas must be at least every replica count of the schedule"},
		{name: "an hpaRef without a scale target", mutate: func(w *builders.TDSetWrapper) { w.HPARef("web", 10) },
			answer: invalid, message: schedulev2.MessageHPARefWithTarget},
		{name: "an hpaRef with a CPU target", mutate: func(w *builders.TDSetWrapper) {
			w.ScaleTarget("apps/v1", "Deployment", "web").HPARef("web", 10).Spec.Autoscaling.TargetCPUUtilizationPercentage = ptr.To[int32](70)
		}, answer: invalid, message: schedulev2.MessageHPARefNoCPU},
		{name: "an hpaRef with a count of 0", mutate: func(w *builders.TDSetWrapper) {
			w.ScaleTarget("apps/v1", "Deployment", "web").HPARef("web", 0).Exception("2026-12-25", 0)
		}, answer: invalid, message: "with spec.autoscaling, every replica count (defaultReplicas, windows, exceptions, override) must be at least 1"},
		{name: "an hpaRef name with a slash", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "Deployment", "web").HPARef("a/b", 0) },
			answer: invalid, message: "spec.autoscaling.hpaRef.name in body should match"},
		{name: "onDelete without a scale target", mutate: func(w *builders.TDSetWrapper) { w.OnDelete(schedulev2.OnDeleteRestore) },
			answer: invalid, message: "spec.onDelete says what happens to a spec.scaleTargetRef's replicas"},
		{name: "an onDelete of another value", mutate: func(w *builders.TDSetWrapper) { w.ScaleTarget("apps/v1", "Deployment", "web").OnDelete("Scale") },
			answer: invalid, message: `spec.onDelete: Unsupported value: "Scale"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			name := tc.objName
			if name == "" {
				name = objectName(tc.name)
			}
			w := builders.TDSet(ns, name)
			tc.mutate(w)
			tds := w.Obj()
			expectAnswer(g, env.Client.Create(bg, tds), tc.answer, tc.message)
			if tc.answer == accepted {
				g.Expect(tds.Spec.TimeZone).NotTo(BeEmpty(), "UTC where not set")
			}
		})
	}
}

// Windows over days (endDay) are checked by the schema for their shape and
// by the webhook for overlaps, with each other, with windows of one day
// and across the end of the week, naming both windows.
func TestAdmissionMultiDay(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	windows := func(ws ...schedulev2.Window) func(*builders.TDSetWrapper) {
		return func(w *builders.TDSetWrapper) { w.Windows(ws...) }
	}
	win, over := builders.Window, builders.WindowOver
	weekend := over("Fri", "18:00", "Mon", "06:00", 2)
	for _, tc := range []struct {
		name    string
		mutate  func(*builders.TDSetWrapper)
		answer  int
		message string
	}{
		{name: "the example of docs/tdset.md", mutate: func(w *builders.TDSetWrapper) {
			w.TimeZone("Europe/Berlin").DefaultReplicas(4).Windows(over("Fri", "18:00", "Mon", "06:00", 1), win("08:00", "18:00", 10, "Mon", "Tue", "Wed", "Thu", "Fri")).
				Exception("2026-12-26", 6)
		}},
		{name: "a weekend and the working days", mutate: windows(weekend, win("08:00", "17:00", 5, "Mon", "Tue", "Wed", "Thu", "Fri"))},
		{name: "a weekend and the rest of the week", mutate: windows(weekend, over("Mon", "06:00", "Fri", "18:00", 5))},
		{name: "almost a week and its hour off", mutate: windows(over("Mon", "10:00", "Mon", "09:00", 5), win("09:00", "10:00", 1, "Mon"))},
		{name: "a day to the minute", mutate: windows(over("Fri", "18:00", "Sat", "18:00", 5))},
		{name: "across the end of the week", mutate: windows(over("Sat", "22:00", "Mon", "02:00", 5))},

		{name: "overlap with a window every day", mutate: windows(weekend, win("05:00", "07:00", 3)),
			answer: denied, message: "windows Fri 18:00-Mon 06:00 and every day 05:00-07:00 overlap on Mon,Sat,Sun"},
		{name: "overlap of two windows over days", mutate: windows(weekend, over("Sun", "12:00", "Tue", "00:00", 3)),
			answer: denied, message: "windows Fri 18:00-Mon 06:00 and Sun 12:00-Tue 00:00 overlap on Mon,Sun"},
		{name: "overlap across the end of the week", mutate: windows(over("Sat", "18:00", "Mon", "06:00", 5), win("05:00", "08:00", 3, "Mon")),
			answer: denied, message: "windows Sat 18:00-Mon 06:00 and Mon 05:00-08:00 overlap on Mon"},
		{name: "overlap with a night's tail", mutate: windows(weekend, win("22:00", "19:00", 3, "Thu")),
			answer: denied, message: "windows Fri 18:00-Mon 06:00 and Thu 22:00-19:00 overlap on Fri"},

		{name: "endDay without days", mutate: func(w *builders.TDSetWrapper) {
			ow := weekend
			ow.Days = nil
			w.Windows(ow)
		}, answer: invalid, message: "a window with endDay starts on one day: days must list exactly that day"},
		{name: "endDay with two start days", mutate: func(w *builders.TDSetWrapper) {
			ow := over("Fri", "18:00", "Mon", "06:00", 2)
			ow.Days = append(ow.Days, "Sat")
			w.Windows(ow)
		}, answer: invalid, message: "a window with endDay starts on one day: days must list exactly that day"},
		{name: "a whole week is empty", mutate: windows(over("Mon", "09:00", "Mon", "09:00", 5)),
			answer: invalid, message: "a window that ends on the day and at the time it starts is empty: a window lasts less than a week"},
		{name: "an end day spelt out", mutate: windows(over("Fri", "18:00", "Monday", "06:00", 5)),
			answer: invalid, message: `spec.windows[0].endDay: Unsupported value: "Monday"`},
		{name: "an end time out of range", mutate: windows(over("Fri", "18:00", "Mon", "24:00", 5)),
			answer: invalid, message: "spec.windows[0].end in body should match"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			w := builders.TDSet(ns, objectName("multiday "+tc.name))
			tc.mutate(w)
			expectAnswer(g, env.Client.Create(bg, w.Obj()), tc.answer, tc.message)
		})
	}
}

// v1 keeps its own schema and rules, and its objects reach the webhook
// converted (matchPolicy Equivalent).
func TestAdmissionV1(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	windows := func(ws ...[3]int32) func(*schedulev1.TDSet) {
		return func(t *schedulev1.TDSet) {
			t.Spec.SchedulingConfig = nil
			for _, w := range ws {
				t.Spec.SchedulingConfig = append(t.Spec.SchedulingConfig, schedulev1.SchedulingConfig{StartTime: w[0], EndTime: w[1], Replica: w[2]})
			}
		}
	}
	hourly := func(n int) func(*schedulev1.TDSet) {
		return func(t *schedulev1.TDSet) {
			t.Spec.SchedulingConfig = nil
			for h := range n {
				t.Spec.SchedulingConfig = append(t.Spec.SchedulingConfig, schedulev1.SchedulingConfig{StartTime: int32(h % 24), EndTime: int32((h + 1) % 24), Replica: 1})
			}
		}
	}
	// fromV2 makes the object what v1 reads of the v2 object change makes
	// of the builder's: v2-only fields travel in the annotation.
	fromV2 := func(change func(*builders.TDSetWrapper)) func(*schedulev1.TDSet) {
		return func(t *schedulev1.TDSet) {
			w := builders.TDSet(t.Namespace, t.Name)
			change(w)
			var v1 schedulev1.TDSet
			if err := v1.ConvertFrom(w.Obj()); err != nil {
				panic(err)
			}
			t.Spec, t.Annotations = v1.Spec, v1.Annotations
		}
	}
	annotated := func(value string, intervalMint int32) func(*schedulev1.TDSet) {
		return func(t *schedulev1.TDSet) {
			t.Spec.IntervalMint = intervalMint
			t.Annotations = map[string]string{schedulev1.AnnotationV2Data: value}
		}
	}
	// The builder's windows and n more that v1 cannot show.
	manyWindows := func(n int) func(*builders.TDSetWrapper) {
		return func(w *builders.TDSetWrapper) {
			w.Windows(append(builders.OriginalWindows(), windowsOn("Mon", n)...)...)
		}
	}
	exceptions := func(n int) func(*builders.TDSetWrapper) {
		return func(w *builders.TDSetWrapper) {
			day := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
			for i := range n {
				w.Exception(day.AddDate(0, 0, i).Format(time.DateOnly), 1)
			}
		}
	}
	for _, tc := range []struct {
		name    string
		objName string // object name, when it matters
		mutate  func(*schedulev1.TDSet)
		answer  int
		message string
	}{
		{name: "the original's schedule", mutate: func(*schedulev1.TDSet) {}},
		{name: "v2-only fields within v2's rules", mutate: fromV2(func(w *builders.TDSetWrapper) {
			manyWindows(64 - len(builders.OriginalWindows()))(w)
			exceptions(400)(w)
			w.Autoscaling(5).Override(5, farFuture).ScaleUpLeadTime(24 * time.Hour).ResyncInterval(90 * time.Second)
		})},

		// v2's schema and CEL rules hold for what the annotation brings
		// (issue #40): the webhook checks the whole converted object.
		{name: "a resync of 1ns in the annotation", mutate: annotated(`{"resyncInterval":"1ns"}`, 1),
			answer: denied, message: "spec.resyncInterval: Invalid value: \"1ns\": resyncInterval must be between 1m and 24h"},
		{name: "a resync of 25h in the annotation", mutate: annotated(`{"resyncInterval":"25h"}`, 1440),
			answer: denied, message: "resyncInterval must be between 1m and 24h"},
		{name: "a lead time over a day in the annotation", mutate: annotated(`{"scaleUpLeadTime":"25h"}`, 0),
			answer: denied, message: "scaleUpLeadTime must be between 0s and 24h"},
		{name: "65 windows in the annotation", mutate: fromV2(manyWindows(65 - len(builders.OriginalWindows()))),
			answer: denied, message: "spec.windows: Too many: 65: must have at most 64 items"},
		{name: "thousands of windows in the annotation", mutate: fromV2(manyWindows(3000)),
			answer: denied, message: "spec.windows: Too many"},
		{name: "an annotation over 256 KiB", mutate: annotated(`{"activeRule":"`+strings.Repeat("x", schedulev1.MaxV2DataBytes)+`"}`, 0),
			answer: invalid, message: "metadata.annotations: Too long: may not be more than 262144 bytes"},
		{name: "401 exceptions in the annotation", mutate: fromV2(exceptions(401)),
			answer: denied, message: "spec.exceptions: Too many: 401: must have at most 400 items"},
		{name: "maxReplicas below a window in the annotation", mutate: annotated(`{"autoscaling":{"maxReplicas":4}}`, 0),
			answer: denied, message: "spec.autoscaling.maxReplicas must be at least every replica count of the schedule"},
		{name: "maxReplicas 0 in the annotation", mutate: annotated(`{"autoscaling":{"maxReplicas":0}}`, 0),
			answer: denied, message: schedulev2.MessageMaxReplicasRequired},
		{name: "maxReplicas -1 in the annotation", mutate: annotated(`{"autoscaling":{"maxReplicas":-1}}`, 0),
			answer: denied, message: "spec.autoscaling.maxReplicas: Invalid value: -1: must be between 1 and 1000"},
		{name: "an exception of 1001 in the annotation", mutate: annotated(`{"exceptions":[{"date":"2030-01-01","replicas":1001}]}`, 0),
			answer: denied, message: "spec.exceptions[0].replicas: Invalid value: 1001: must be between 0 and 1000"},
		{name: "a month 13 in the annotation", mutate: annotated(`{"exceptions":[{"date":"2030-13-01","replicas":1}]}`, 0),
			answer: denied, message: "spec.exceptions[0].date"},
		{name: "a weekday spelt out in the annotation", mutate: fromV2(func(w *builders.TDSetWrapper) {
			w.Windows(append(builders.OriginalWindows(), builders.Window("00:30", "00:45", 1, "Monday"))...)
		}), answer: denied, message: `spec.windows[5].days[0]: Unsupported value: "Monday"`},
		{name: "a window over days in the annotation", mutate: fromV2(func(w *builders.TDSetWrapper) {
			w.Windows(builders.Window("09:00", "17:00", 5), builders.WindowOver("Fri", "22:00", "Sat", "06:00", 4))
		})},
		{name: "a window over days of a whole week in the annotation", mutate: fromV2(func(w *builders.TDSetWrapper) {
			w.Windows(builders.Window("09:00", "17:00", 5), builders.WindowOver("Fri", "22:00", "Fri", "22:00", 4))
		}), answer: denied, message: "spec.windows[1]: Invalid value: \"\": a window that ends on the day and at the time it starts is empty"},
		{name: "an end day spelt out in the annotation", mutate: fromV2(func(w *builders.TDSetWrapper) {
			w.Windows(builders.Window("09:00", "17:00", 5), builders.WindowOver("Fri", "22:00", "Saturday", "06:00", 4))
		}), answer: denied, message: `spec.windows[1].endDay: Unsupported value: "Saturday"`},
		{name: "a window over days overlapping in the annotation", mutate: fromV2(func(w *builders.TDSetWrapper) {
			w.Windows(builders.Window("09:00", "17:00", 5), builders.WindowOver("Fri", "22:00", "Sat", "10:00", 4))
		}), answer: denied, message: "windows every day 09:00-17:00 and Fri 22:00-Sat 10:00 overlap on Sat"},
		{name: "an unknown field in the annotation", mutate: annotated(`{"resyncIntervall":"1ns"}`, 0),
			answer: denied, message: `metadata.annotations[schedule.rs/v2-data]: not what schedule.rs/v1 writes: unknown field "resyncIntervall"`},
		{name: "a malformed annotation", mutate: annotated(`{"resyncInterval":`, 0),
			answer: denied, message: "through schedule.rs/v2, not schedule.rs/v1"},
		{name: "an annotation whose windows v1's would drop", mutate: func(t *schedulev1.TDSet) {
			fromV2(manyWindows(1))(t)
			t.Spec.SchedulingConfig[0].Replica = 9
		}, answer: denied, message: "would drop the windows v1 cannot show (with weekdays, minutes or an end day): write v2-only fields"},
		{name: "adjacent windows", mutate: windows([3]int32{9, 17, 5}, [3]int32{17, 9, 1})},
		{name: "23-0 next to 0-1", mutate: windows([3]int32{23, 0, 5}, [3]int32{0, 1, 1})},
		{name: "24 hourly windows", mutate: hourly(24)},
		{name: "empty window", mutate: windows([3]int32{9, 9, 5}),
			answer: invalid, message: "window 9-9 is empty: startTime and endTime must differ"},
		{name: "overlap", mutate: windows([3]int32{9, 17, 5}, [3]int32{10, 12, 1}),
			answer: invalid, message: "windows 9-17 and 10-12 overlap: each hour may belong to one window only"},
		{name: "overlap named in list order", mutate: windows([3]int32{1, 7, 2}, [3]int32{9, 17, 5}, [3]int32{16, 18, 1}),
			answer: invalid, message: "windows 9-17 and 16-18 overlap"},
		{name: "overlap across midnight", mutate: windows([3]int32{22, 2, 5}, [3]int32{1, 3, 1}),
			answer: invalid, message: "windows 22-2 and 1-3 overlap"},
		{name: "19-0 overlaps 23-1", mutate: windows([3]int32{19, 0, 5}, [3]int32{23, 1, 1}),
			answer: invalid, message: "windows 19-0 and 23-1 overlap"},
		{name: "duplicate windows", mutate: windows([3]int32{1, 2, 5}, [3]int32{1, 2, 5}),
			answer: invalid, message: "windows 1-2 and 1-2 overlap"},
		{name: "hour 24", mutate: windows([3]int32{24, 2, 5}),
			answer: invalid, message: "spec.schedulingConfig[0].startTime: Invalid value: 24: spec.schedulingConfig[0].startTime in body should be less than or equal to 23"},
		{name: "negative replica", mutate: windows([3]int32{1, 2, -1}),
			answer: invalid, message: "spec.schedulingConfig[0].replica in body should be greater than or equal to 0"},
		{name: "25 windows", mutate: hourly(25),
			answer: invalid, message: "spec.schedulingConfig: Too many: 25: must have at most 24 items"},
		{name: "no windows", mutate: windows(),
			answer: invalid, message: "spec.schedulingConfig"},
		{name: "defaultReplica 0", mutate: func(t *schedulev1.TDSet) { t.Spec.DefaultReplica = 0 },
			answer: invalid, message: "spec.defaultReplica in body should be greater than or equal to 1"},
		{name: "port 65536", mutate: func(t *schedulev1.TDSet) { t.Spec.Container.Port = 65536 },
			answer: invalid, message: "spec.container.port in body should be less than or equal to 65535"},
		{name: "no image", mutate: func(t *schedulev1.TDSet) { t.Spec.Container.Image = "" },
			answer: invalid, message: "spec.container.image"},
		{name: "intervalMint over a day", mutate: func(t *schedulev1.TDSet) { t.Spec.IntervalMint = 1441 },
			answer: invalid, message: "spec.intervalMint in body should be less than or equal to 1440"},
		{name: "service on a name that is no DNS label", objName: "9to5", mutate: func(t *schedulev1.TDSet) { t.Spec.Service = &schedulev1.ServiceSpec{Port: 80} },
			answer: invalid, message: "the name must be a DNS label"},
		{name: "no service on a name that is no DNS label", objName: "9to5.ok", mutate: func(*schedulev1.TDSet) {}},
		// v1's schema has no rule for these: the v2 webhook rejects them.
		{name: "an unknown time zone", mutate: func(t *schedulev1.TDSet) { t.Spec.TimeZone = "Mars/Olympus_Mons" },
			answer: denied, message: `spec.timeZone: unknown time zone "Mars/Olympus_Mons"`},
		// A scale target travels in the annotation, and v1 writes are held
		// to v2's rules for it.
		{name: "a scale target in the annotation", mutate: fromV2(func(w *builders.TDSetWrapper) {
			w.ScaleTarget("apps/v1", "StatefulSet", "db").OnDelete(schedulev2.OnDeleteKeep)
		})},
		{name: "no container and no annotation", mutate: func(t *schedulev1.TDSet) { t.Spec.Container = schedulev1.ContainerSpec{} },
			answer: denied, message: "exactly one of spec.container"},
		{name: "no container and an annotation without a scale target", mutate: func(t *schedulev1.TDSet) {
			t.Spec.Container = schedulev1.ContainerSpec{}
			t.Annotations = map[string]string{schedulev1.AnnotationV2Data: `{"activeRule":"x"}`}
		}, answer: denied, message: "exactly one of spec.container"},
		{name: "a scale target beside a container in the annotation", mutate: annotated(`{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"}}`, 0),
			answer: denied, message: "exactly one of spec.container"},
		{name: "a scale target name over 253 in the annotation", mutate: func(t *schedulev1.TDSet) {
			t.Spec.Container = schedulev1.ContainerSpec{}
			t.Annotations = map[string]string{schedulev1.AnnotationV2Data: `{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"` + strings.Repeat("n", 254) + `"}}`}
		}, answer: denied, message: "spec.scaleTargetRef.name: Too long: may not be more than 253 bytes"},
		{name: "a scale target kind in lower case in the annotation", mutate: func(t *schedulev1.TDSet) {
			t.Spec.Container = schedulev1.ContainerSpec{}
			t.Annotations = map[string]string{schedulev1.AnnotationV2Data: `{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"deployment","name":"web"}}`}
		}, answer: denied, message: `spec.scaleTargetRef.kind: Invalid value: "deployment": must be a kind such as Deployment`},
		{name: "an onDelete of another value in the annotation", mutate: func(t *schedulev1.TDSet) {
			t.Spec.Container = schedulev1.ContainerSpec{}
			t.Annotations = map[string]string{schedulev1.AnnotationV2Data: `{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"onDelete":"Scale"}`}
		}, answer: denied, message: `spec.onDelete: Unsupported value: "Scale"`},
		{name: "autoscaling with a scale target in the annotation", mutate: func(t *schedulev1.TDSet) {
			t.Spec.Container = schedulev1.ContainerSpec{}
			t.Annotations = map[string]string{schedulev1.AnnotationV2Data: `{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"autoscaling":{"maxReplicas":10}}`}
		}, answer: denied, message: schedulev2.MessageHPARefWithTarget},
		{name: "an hpaRef with a scale target in the annotation", mutate: func(t *schedulev1.TDSet) {
			t.Spec.Container = schedulev1.ContainerSpec{}
			t.Annotations = map[string]string{schedulev1.AnnotationV2Data: `{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"autoscaling":{"hpaRef":{"name":"web"}}}`}
		}},
		{name: "an hpaRef with a CPU target in the annotation", mutate: func(t *schedulev1.TDSet) {
			t.Spec.Container = schedulev1.ContainerSpec{}
			t.Annotations = map[string]string{schedulev1.AnnotationV2Data: `{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"autoscaling":{"hpaRef":{"name":"web"},"targetCPUUtilizationPercentage":70}}`}
		}, answer: denied, message: schedulev2.MessageHPARefNoCPU},
		{name: "an hpaRef without a scale target in the annotation", mutate: annotated(`{"autoscaling":{"hpaRef":{"name":"web"},"maxReplicas":10}}`, 0),
			answer: denied, message: schedulev2.MessageHPARefWithTarget},
		{name: "autoscaling without maxReplicas in the annotation", mutate: annotated(`{"autoscaling":{}}`, 0),
			answer: denied, message: schedulev2.MessageMaxReplicasRequired},
		{name: "an override that has ended, in the annotation", mutate: func(t *schedulev1.TDSet) {
			t.Annotations = map[string]string{schedulev1.AnnotationV2Data: `{"override":{"replicas":8,"until":"2020-01-01T00:00:00Z"}}`}
		}, answer: denied, message: "spec.override.until 2020-01-01T00:00:00Z is in the past"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			name := tc.objName
			if name == "" {
				name = objectName(tc.name)
			}
			tds := builders.TDSetV1(ns, name)
			tc.mutate(tds)
			expectAnswer(g, env.Client.Create(bg, tds), tc.answer, tc.message)
		})
	}
}

// windowsOn are n windows of one minute on day, from midnight on: v1 can
// show none of them, and up to 60 fit the hour no window of the builder's
// covers.
func windowsOn(day schedulev2.Weekday, n int) []schedulev2.Window {
	ws := make([]schedulev2.Window, n)
	for i := range ws {
		m := i % 60
		ws[i] = builders.Window(fmt.Sprintf("00:%02d", m), fmt.Sprintf("%02d:%02d", (m+1)/60, (m+1)%60), 1, day)
	}
	return ws
}

// Every TDSet sample, v1 and v2, is admitted by the API server and the
// webhook unchanged.
func TestAdmissionSamples(t *testing.T) {
	env := testenv.Get(t)
	ns := env.Namespace(t)
	for _, tc := range []struct {
		file string
		obj  client.Object
	}{
		{"tdset.yaml", &schedulev1.TDSet{}},
		{"tdset-timezone.yaml", &schedulev1.TDSet{}},
		{"tdset-v2.yaml", &schedulev2.TDSet{}},
		{"tdset-scale-target.yaml", &schedulev2.TDSet{}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			g := NewWithT(t)
			samples.Load(t, tc.file, tc.obj)
			tc.obj.SetNamespace(ns)
			g.Expect(env.Client.Create(bg, tc.obj, client.DryRunAll)).To(Succeed())
		})
	}
}

// The Validator on its own, with a clock of the test's.
func TestValidator(t *testing.T) {
	now := office
	past, future := now.Add(-time.Minute), now.Add(time.Minute)
	base := func() *builders.TDSetWrapper { return builders.TDSet("ns", "x") }
	overlap := []schedulev2.Window{builders.Window("08:30", "18:00", 5, "Mon"), builders.Window("17:00", "20:00", 3, "Mon")}
	const overlapMsg = "windows Mon 08:30-18:00 and Mon 17:00-20:00 overlap on Mon"
	for _, tc := range []struct {
		name     string
		old      *schedulev2.TDSet // nil: a create
		tds      *schedulev2.TDSet
		err      []string // nil: allowed
		warnings []string
	}{
		{name: "create: valid", tds: base().Obj()},
		{name: "create: an override until later", tds: base().Override(8, future).Obj()},
		{name: "create: an override that ends now", tds: base().Override(8, now).Obj(), err: []string{"spec.override.until 2026-03-10T10:00:00Z is in the past"}},
		{name: "create: an override that has ended", tds: base().Override(8, past).Obj(), err: []string{"spec.override.until 2026-03-10T09:59:00Z is in the past"}},
		{name: "create: overlapping windows", tds: base().Windows(overlap...).Obj(), err: []string{overlapMsg}},
		{name: "create: an unknown zone", tds: base().TimeZone("Mars/Olympus_Mons").Obj(), err: []string{`unknown time zone "Mars/Olympus_Mons"`}},

		{name: "update: valid", old: base().Obj(), tds: base().Suspend(true).Obj()},
		{name: "update: an override that ended since is kept", old: base().Override(8, past).Obj(), tds: base().Override(8, past).Suspend(true).Obj()},
		{name: "update: an override that ended since may be removed", old: base().Override(8, past).Obj(), tds: base().Obj()},
		{name: "update: an override moved into the past", old: base().Override(8, future).Obj(), tds: base().Override(8, past).Obj(), err: []string{"is in the past"}},
		{name: "update: an override's count changed after it ended", old: base().Override(8, past).Obj(), tds: base().Override(9, past).Obj(), err: []string{"is in the past"}},
		{name: "update: a problem kept", old: base().Windows(overlap...).Obj(), tds: base().Windows(overlap...).Suspend(true).Obj(),
			warnings: []string{overlapMsg + " (kept: the object had this problem before)"}},
		{name: "update: an unknown zone kept", old: base().TimeZone("Mars/Olympus_Mons").Obj(), tds: base().TimeZone("Mars/Olympus_Mons").Suspend(true).Obj(),
			warnings: []string{`unknown time zone "Mars/Olympus_Mons"`}},
		{name: "update: another unknown zone", old: base().TimeZone("Mars/Olympus_Mons").Obj(), tds: base().TimeZone("Mars/Phobos").Obj(),
			err: []string{`unknown time zone "Mars/Phobos"`}},
		{name: "update: a new problem beside a kept one", old: base().Windows(overlap...).Obj(), tds: base().Windows(overlap...).Exception("2026-12-25", 1).Exception("2026-12-25", 1).Obj(),
			err: []string{"exception date 2026-12-25 appears twice"}},
		{name: "update: a new override in the past beside a kept problem", old: base().Windows(overlap...).Obj(), tds: base().Windows(overlap...).Override(8, past).Obj(),
			err: []string{"is in the past"}},
		// The zone is checked first, and must not hide a new problem of
		// the schedule.
		{name: "update: a new overlap behind a kept unknown zone", old: base().TimeZone("Mars/Olympus_Mons").Obj(), tds: base().TimeZone("Mars/Olympus_Mons").Windows(overlap...).Obj(),
			err: []string{overlapMsg}},
		// Fixing one of two problems is progress, not a new problem.
		{name: "update: one of two problems fixed", old: base().Windows(overlap...).Exception("2026-12-25", 1).Exception("2026-12-25", 1).Obj(), tds: base().Windows(overlap...).Obj(),
			warnings: []string{overlapMsg + " (kept: the object had this problem before)"}},
		{name: "update: a problem fixed", old: base().Windows(overlap...).Obj(), tds: base().Obj()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			v := &tdset.Validator{Clock: clocktesting.NewFakeClock(now)}
			var (
				warnings []string
				err      error
			)
			if tc.old == nil {
				warnings, err = v.ValidateCreate(bg, tc.tds)
			} else {
				warnings, err = v.ValidateUpdate(bg, tc.old, tc.tds)
			}
			if tc.err == nil {
				g.Expect(err).NotTo(HaveOccurred())
			} else {
				g.Expect(err).To(HaveOccurred())
				for _, e := range tc.err {
					g.Expect(err.Error()).To(ContainSubstring(e))
				}
			}
			g.Expect(warnings).To(HaveLen(len(tc.warnings)))
			for i, w := range tc.warnings {
				g.Expect(warnings[i]).To(ContainSubstring(w))
			}
			if len(warnings) > 0 {
				g.Expect(warnings[0]).To(HaveSuffix("(kept: the object had this problem before)"))
			}
		})
	}
	g := NewWithT(t)
	warnings, err := (&tdset.Validator{Clock: clocktesting.NewFakeClock(now)}).ValidateDelete(bg, base().TimeZone("Mars/Olympus_Mons").Obj())
	g.Expect(err).NotTo(HaveOccurred(), "every deletion is allowed")
	g.Expect(warnings).To(BeEmpty())
}

// unvalidated labels the TDSets that storeUnvalidated lets past the webhook.
const unvalidated = "test.schedule.rs/unvalidated"

// storeUnvalidated runs write while the validating webhook skips TDSets
// labelled unvalidated, as if they were stored before it was installed,
// and then restores the webhook configuration envtest installed.
func storeUnvalidated(t *testing.T, write func()) {
	t.Helper()
	env := testenv.Get(t)
	g, c := NewWithT(t), env.Client
	find := func(g Gomega) (*admissionregistrationv1.ValidatingWebhookConfiguration, int) {
		list := &admissionregistrationv1.ValidatingWebhookConfigurationList{}
		g.Expect(c.List(bg, list)).To(Succeed())
		for i := range list.Items {
			for j, wh := range list.Items[i].Webhooks {
				if wh.Name == "vtdset-v2.schedule.rs" {
					return &list.Items[i], j
				}
			}
		}
		g.Expect(list.Items).To(ContainElement(HaveField("Webhooks", ContainElement(HaveField("Name", "vtdset-v2.schedule.rs")))), "envtest installed config/webhook")
		return nil, 0
	}
	setSelector := func(sel *metav1.LabelSelector) {
		g.Eventually(func(g Gomega) {
			vwc, j := find(g)
			vwc.Webhooks[j].ObjectSelector = sel
			g.Expect(c.Update(bg, vwc)).To(Succeed())
		}).Should(Succeed())
	}
	// A labelled TDSet the webhook denies, created in a dry run.
	probe := func() error {
		tds := builders.TDSet("default", "probe").TimeZone("Mars/Olympus_Mons").Obj()
		tds.Labels = map[string]string{unvalidated: "true"}
		return c.Create(bg, tds, client.DryRunAll)
	}
	vwc, j := find(g)
	original := vwc.Webhooks[j].ObjectSelector
	setSelector(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: unvalidated, Operator: metav1.LabelSelectorOpDoesNotExist}}})
	defer func() {
		setSelector(original)
		g.Eventually(func() bool { return apierrors.IsForbidden(probe()) }).Should(BeTrue(), "the webhook validates every TDSet again")
	}()
	g.Eventually(probe).Should(Succeed(), "the webhook skips labelled TDSets")
	write()
}

// Objects stored before the webhook checked them: the controller reports
// them and leaves their Deployment alone, they can still be edited while
// the problem stays (with a warning), a new problem is rejected, and once
// fixed they are reconciled.
func TestStoredBeforeValidation(t *testing.T) {
	g, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	labelled := func(w *builders.TDSetWrapper) *schedulev2.TDSet {
		tds := w.Obj()
		tds.Labels = map[string]string{unvalidated: "true"}
		return tds
	}
	overlap := labelled(builders.TDSet(ns, "overlap").Windows(builders.Window("08:30", "18:00", 5, "Mon"), builders.Window("17:00", "20:00", 3, "Mon")))
	mars := labelled(builders.TDSet(ns, "mars").TimeZone("Mars/Olympus_Mons"))
	local := labelled(builders.TDSet(ns, "local"))
	g.Expect(c.Create(bg, local)).To(Succeed())
	g.Eventually(func(g Gomega) { g.Expect(replicasOf(g, c, ns, "local")).To(Equal(int32(5))) }).Should(Succeed())
	before := deployment(g, c, ns, "local")

	storeUnvalidated(t, func() {
		g.Expect(c.Create(bg, overlap)).To(Succeed())
		g.Expect(c.Create(bg, mars)).To(Succeed())
		// The controller's own zone is refused, and the image change that
		// comes with it is not rolled out while the zone is invalid.
		patch(g, c, local, `{"spec":{"timeZone":"Local","container":{"image":"registry.example/new"}}}`)
	})

	expectInvalid := func(tds *schedulev2.TDSet, reason, message string) {
		g.Eventually(func(g Gomega) {
			fetch(g, c, tds)
			g.Expect(tds.Status.ObservedGeneration).To(Equal(tds.Generation))
			for _, cond := range []string{conditions.Ready, schedulev2.ConditionScheduled} {
				got := conditions.Get(tds, cond)
				g.Expect(got).NotTo(BeNil())
				g.Expect(got.Status).To(Equal(metav1.ConditionFalse))
				g.Expect(got.Reason).To(Equal(reason))
				g.Expect(got.Message).To(ContainSubstring(message))
			}
			g.Expect(conditions.Get(tds, conditions.Ready).Message).To(HaveSuffix("; the Deployment is left as it is"))
			g.Expect(tds.Status.CurrentReplicas).To(BeNil())
			g.Expect(tds.Status.ActiveRule).To(BeEmpty())
			g.Expect(tds.Status.ActiveWindow).To(BeNil())
			g.Expect(tds.Status.NextTransitionTime).To(BeNil())
			g.Expect(tds.Status.NextReplicas).To(BeNil())
		}).Should(Succeed())
		g.Eventually(func(g Gomega) []string { return testenv.Events(g, c, ns, tds.Name) }).Should(
			ContainElement(And(HavePrefix("Warning "+reason+": "), ContainSubstring(message), HaveSuffix("; the Deployment is left as it is"))))
	}
	expectInvalid(overlap, schedulev2.ReasonInvalidSchedule, "windows Mon 08:30-18:00 and Mon 17:00-20:00 overlap on Mon")
	expectInvalid(mars, schedulev2.ReasonInvalidTimeZone, `spec.timeZone: unknown time zone "Mars/Olympus_Mons"`)
	expectInvalid(local, schedulev2.ReasonInvalidTimeZone, `"Local" is the controller's own time zone`)
	g.Expect(fetch(g, c, local).Status.AvailableReplicas).To(HaveValue(BeZero()), "still observed")
	g.Consistently(func(g Gomega) {
		for _, name := range []string{"overlap", "mars"} {
			g.Expect(apierrors.IsNotFound(c.Get(bg, client.ObjectKey{Namespace: ns, Name: name}, &appsv1.Deployment{}))).To(BeTrue(), name)
		}
		g.Expect(deployment(g, c, ns, "local").ResourceVersion).To(Equal(before.ResourceVersion))
	}, 2*time.Second).Should(Succeed())

	wc, warnings := testenv.Get(t).ClientWithWarnings(t)
	t.Run("an update that keeps the problem", func(t *testing.T) {
		g := NewWithT(t)
		patch(g, wc, overlap, `{"spec":{"suspend":true}}`)
		g.Expect(warnings.Take()).To(ContainElement(ContainSubstring("windows Mon 08:30-18:00 and Mon 17:00-20:00 overlap on Mon (kept: the object had this problem before)")))
		g.Eventually(func(g Gomega) {
			fetch(g, c, overlap)
			g.Expect(overlap.Status.ObservedGeneration).To(Equal(overlap.Generation))
			g.Expect(conditions.IsTrue(overlap, schedulev2.ConditionSuspended)).To(BeTrue())
			g.Expect(conditions.Get(overlap, conditions.Ready).Reason).To(Equal(schedulev2.ReasonInvalidSchedule))
		}).Should(Succeed())
		// Through v1 too.
		patch(g, wc, &schedulev1.TDSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "mars"}}, `{"metadata":{"annotations":{"team":"web"}}}`)
		g.Expect(warnings.Take()).To(ContainElement(ContainSubstring(`unknown time zone "Mars/Olympus_Mons"`)))
	})
	t.Run("an update with a new problem", func(t *testing.T) {
		g := NewWithT(t)
		for _, tc := range []struct {
			obj     *schedulev2.TDSet
			patch   string
			message string
		}{
			{obj: overlap, patch: `{"spec":{"exceptions":[{"date":"2026-12-25","replicas":1},{"date":"2026-12-25","replicas":2}]}}`, message: "exception date 2026-12-25 appears twice"},
			{obj: overlap, patch: `{"spec":{"override":{"replicas":8,"until":"2020-01-01T00:00:00Z"}}}`, message: "spec.override.until 2020-01-01T00:00:00Z is in the past"},
			{obj: overlap, patch: `{"spec":{"windows":[{"days":["Mon"],"start":"08:30","end":"18:00","replicas":5},{"days":["Mon"],"start":"17:00","end":"21:00","replicas":3}]}}`, message: "windows Mon 08:30-18:00 and Mon 17:00-21:00 overlap on Mon"},
			{obj: mars, patch: `{"spec":{"timeZone":"Mars/Phobos"}}`, message: `unknown time zone "Mars/Phobos"`},
			{obj: mars, patch: `{"spec":{"windows":[{"start":"09:00","end":"17:00","replicas":5},{"start":"16:00","end":"18:00","replicas":1}]}}`, message: "windows every day 09:00-17:00 and every day 16:00-18:00 overlap on every day"},
		} {
			err := wc.Patch(bg, tc.obj.DeepCopy(), client.RawPatch(types.MergePatchType, []byte(tc.patch)))
			expectAnswer(g, err, denied, tc.message)
		}
		g.Expect(warnings.Take()).To(BeEmpty())
	})
	t.Run("fixed", func(t *testing.T) {
		g := NewWithT(t)
		patch(g, wc, overlap, `{"spec":{"suspend":false,"windows":[{"days":["Mon"],"start":"08:30","end":"17:00","replicas":5},{"days":["Mon"],"start":"17:00","end":"20:00","replicas":3}]}}`)
		patch(g, wc, mars, `{"spec":{"timeZone":"Asia/Kathmandu"}}`)
		patch(g, wc, local, `{"spec":{"timeZone":"UTC"}}`)
		g.Expect(warnings.Take()).To(BeEmpty())
		g.Eventually(func(g Gomega) {
			// Tuesday 10:00 UTC: no Monday window, defaultReplicas.
			g.Expect(replicasOf(g, c, ns, "overlap")).To(Equal(int32(3)))
			// 15:45 in Kathmandu: window 09:00-17:00.
			g.Expect(replicasOf(g, c, ns, "mars")).To(Equal(int32(5)))
			g.Expect(deployment(g, c, ns, "local").Spec.Template.Spec.Containers[0].Image).To(Equal("registry.example/new"))
			fetch(g, c, overlap)
			g.Expect(conditions.Get(overlap, schedulev2.ConditionScheduled).Reason).To(Equal(schedulev2.ReasonDefaultReplicas))
			g.Expect(conditions.Get(overlap, conditions.Ready).Reason).To(Equal(schedulev2.ReasonProgressing))
			g.Expect(overlap.Status.ActiveRule).To(Equal("defaultReplicas"))
		}).Should(Succeed())
	})
}
