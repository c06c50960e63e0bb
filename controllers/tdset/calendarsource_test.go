package tdset_test

import (
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/icalendar"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/schedule"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

func TestImportedDates(t *testing.T) {
	day := func(y int, m, d int) schedule.Date { return schedule.Date{Year: y, Month: time.Month(m), Day: d} }
	for _, tc := range []struct {
		name     string
		events   []icalendar.Event
		replicas *int32
		want     []schedulev2.CalendarDate
	}{
		{name: "no events", want: []schedulev2.CalendarDate{}},
		{name: "one day, yearly, a range across a month's end, in the file's order",
			events: []icalendar.Event{
				{Summary: "Inventory", Start: day(2026, 7, 3), Days: 1},
				{Summary: "Christmas Day", Start: day(2026, 12, 25), Days: 1, Yearly: true},
				{Summary: "Summer closure", Start: day(2026, 7, 27), Days: 12},
			},
			want: []schedulev2.CalendarDate{
				{Name: "Inventory", Date: "2026-07-03"},
				{Name: "Christmas Day", Yearly: "12-25"},
				{Name: "Summer closure", From: "2026-07-27", To: "2026-08-07"},
			}},
		{name: "a range over the year's end, and a leap day every year",
			events: []icalendar.Event{
				{Summary: "Winter break", Start: day(2026, 12, 24), Days: 14},
				{Summary: "Leap day", Start: day(2028, 2, 29), Days: 1, Yearly: true},
			},
			want: []schedulev2.CalendarDate{
				{Name: "Winter break", From: "2026-12-24", To: "2027-01-06"},
				{Name: "Leap day", Yearly: "02-29"},
			}},
		{name: "the source's count on every date",
			events:   []icalendar.Event{{Summary: "Strike", Start: day(2026, 3, 10), Days: 2}, {Summary: "", Start: day(2026, 3, 20), Days: 1}},
			replicas: ptr.To[int32](0),
			want: []schedulev2.CalendarDate{
				{Name: "Strike", From: "2026-03-10", To: "2026-03-11", Replicas: ptr.To[int32](0)},
				{Name: "unnamed event", Date: "2026-03-20", Replicas: ptr.To[int32](0)},
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			got := tdset.ImportedDates(tc.events, tc.replicas)
			g.Expect(got).To(Equal(tc.want))
			if tc.replicas != nil && len(got) > 1 {
				*got[0].Replicas = 7
				g.Expect(*got[1].Replicas).To(Equal(*tc.replicas), "each entry has a count of its own")
			}
		})
	}
}

func TestEntryName(t *testing.T) {
	for _, tc := range []struct{ summary, want string }{
		{"Christmas Day", "Christmas Day"},
		{"Tag der Deutschen Einheit", "Tag der Deutschen Einheit"},
		{"Fête nationale", "Fête nationale"},
		{"  New\tYear's\r\nDay  ", "New Year's Day"},
		{"<b>Sale</b> & more!", "b Sale b more"},
		{"\x1b[31mred\x1b[0m", "31mred 0m"},
		{"", "unnamed event"},
		{"!!!", "unnamed event"},
		{strings.Repeat("a", 100), strings.Repeat("a", schedulev2.MaxCalendarDateName)},
		{strings.Repeat("a", 62) + " b", strings.Repeat("a", 62)},
		{strings.Repeat("é", 100), strings.Repeat("é", schedulev2.MaxCalendarDateName)},
	} {
		got := tdset.EntryName(tc.summary)
		if got != tc.want {
			t.Errorf("EntryName(%q) = %q, want %q", tc.summary, got, tc.want)
		}
		if n := len([]rune(got)); n > schedulev2.MaxCalendarDateName {
			t.Errorf("EntryName(%q) has %d characters", tc.summary, n)
		}
	}
}

// ics is an iCalendar file of VEVENT lines, with CRLF line ends.
func ics(lines ...string) string {
	all := append(append([]string{"BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//test//EN"}, lines...), "END:VCALENDAR")
	return strings.Join(all, "\r\n") + "\r\n"
}

// icsConfigMap is the ConfigMap ns/name with data under holidays.ics,
// labelled so that the manager sees it when watched.
func icsConfigMap(ns, name, data string, watched bool) *corev1.ConfigMap {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Data: map[string]string{"holidays.ics": data}}
	if watched {
		cm.Labels = map[string]string{ownership.LabelWatch: ownership.WatchValue}
	}
	return cm
}

// importingCalendar is the Calendar ns/name that imports the .ics file
// under holidays.ics of the ConfigMap configMap, at replicas.
func importingCalendar(ns, name, configMap string, replicas *int32) *schedulev2.Calendar {
	return &schedulev2.Calendar{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: schedulev2.CalendarSpec{
		Source: &schedulev2.CalendarSource{ConfigMapRef: schedulev2.ConfigMapKeyRef{Name: configMap, Key: "holidays.ics"}, Replicas: replicas},
	}}
}

// A Calendar imports the whole-day events of an .ics file in a labelled
// ConfigMap. The clock stands still, so only the ConfigMap's watch can
// reconcile the TDSet when the file changes: a day added to it sets the
// count at once, an entry of spec.dates wins on a day both hold, a file
// that cannot be imported makes the TDSet not Ready with one Warning and
// keeps the count, and a fixed file brings the schedule back.
func TestCalendarImportsAnICSFileFromAConfigMap(t *testing.T) {
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	g := NewWithT(t)
	cm := icsConfigMap(ns, "holidays-ics", ics("BEGIN:VEVENT", "SUMMARY:New Year", "DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=YEARLY", "END:VEVENT"), true)
	g.Expect(c.Create(bg, cm)).To(Succeed())
	cal := importingCalendar(ns, "holidays", "holidays-ics", ptr.To[int32](1))
	g.Expect(c.Create(bg, cal)).To(Succeed())
	tds := builders.TDSet(ns, "shop").Calendar(schedulev2.CalendarKindNamespaced, "holidays").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "shop")).To(Equal(int32(5)))
		g.Expect(fetch(g, c, tds).Status.ActiveRule).To(Equal(window9to17))
	}).Should(Succeed())

	// office is 2026-03-10.
	cm.Data["holidays.ics"] = ics(
		"BEGIN:VEVENT", "SUMMARY:New Year", "DTSTART;VALUE=DATE:20260101", "RRULE:FREQ=YEARLY", "END:VEVENT",
		"BEGIN:VEVENT", "SUMMARY:Strike\\, day one", "DTSTART;VALUE=DATE:20260310", "DTEND;VALUE=DATE:20260312", "END:VEVENT",
	)
	g.Expect(c.Update(bg, cm)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "shop")).To(Equal(int32(1)))
		got := fetch(g, c, tds)
		g.Expect(got.Status.ActiveRule).To(Equal("calendar Calendar/holidays Strike, day one 2026-03-10"))
		g.Expect(conditions.Get(got, schedulev2.ConditionScheduled).Reason).To(Equal(schedulev2.ReasonCalendarDateActive))
	}).Should(Succeed())

	// An entry of the Calendar's own dates wins over the imported one.
	patch(g, c, cal, `{"spec":{"dates":[{"name":"half day","date":"2026-03-10","replicas":2}]}}`)
	g.Eventually(func(g Gomega) int32 { return replicasOf(g, c, ns, "shop") }).Should(Equal(int32(2)))
	patch(g, c, cal, `{"spec":{"dates":null}}`)
	g.Eventually(func(g Gomega) int32 { return replicasOf(g, c, ns, "shop") }).Should(Equal(int32(1)))

	// A timed event cannot be imported: nothing of the file is.
	cm.Data["holidays.ics"] += ics("BEGIN:VEVENT", "SUMMARY:Meeting", "DTSTART:20260310T090000Z", "END:VEVENT")
	g.Expect(c.Update(bg, cm)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := readyOf(g, c, tds)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonInvalidCalendar))
		g.Expect(ready.Message).To(ContainSubstring("Calendar holidays: spec.source: ConfigMap " + ns + "/holidays-ics key holidays.ics: 1 events cannot be imported"))
		g.Expect(ready.Message).To(ContainSubstring("only whole-day events"))
		g.Expect(testenv.Warnings(g, c, ns, "shop", schedulev2.ReasonInvalidCalendar)).To(HaveLen(1))
	}).Should(Succeed())
	g.Consistently(func(g Gomega) int32 { return replicasOf(g, c, ns, "shop") }).Should(Equal(int32(1)), "the last count stays")

	// A file of more events than the bound is refused whole. (The API
	// server refuses a ConfigMap over 1 MiB, the parser's byte bound.)
	var many []string
	for i := range icalendar.DefaultLimits.MaxEvents + 1 {
		many = append(many, "BEGIN:VEVENT", "SUMMARY:Day", "DTSTART;VALUE=DATE:"+time.Date(2030, 1, 1+i, 0, 0, 0, 0, time.UTC).Format("20060102"), "END:VEVENT")
	}
	cm.Data["holidays.ics"] = ics(many...)
	g.Expect(c.Update(bg, cm)).To(Succeed())
	g.Eventually(func(g Gomega) string { return readyOf(g, c, tds).Message }).Should(ContainSubstring("more than 366 events"))

	cm.Data["holidays.ics"] = ics("BEGIN:VEVENT", "SUMMARY:Strike", "DTSTART;VALUE=DATE:20260310", "END:VEVENT")
	g.Expect(c.Update(bg, cm)).To(Succeed())
	g.Eventually(func(g Gomega) {
		got := fetch(g, c, tds)
		g.Expect(got.Status.ActiveRule).To(Equal("calendar Calendar/holidays Strike 2026-03-10"))
		g.Expect(conditions.Get(got, schedulev2.ConditionScheduled).Status).To(Equal(metav1.ConditionTrue))
	}).Should(Succeed())
}

// The manager sees only ConfigMaps labelled multi-operator.dev/watch=true:
// an unlabelled one is reported with the command that labels it, and
// labelling it imports it at once. A missing one is not found.
func TestCalendarSourceMustBeLabelled(t *testing.T) {
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	g := NewWithT(t)
	cal := importingCalendar(ns, "holidays", "holidays-ics", ptr.To[int32](0))
	g.Expect(c.Create(bg, cal)).To(Succeed())
	tds := builders.TDSet(ns, "shop").Calendar(schedulev2.CalendarKindNamespaced, "holidays").Obj()
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) {
		ready := readyOf(g, c, tds)
		g.Expect(ready.Reason).To(Equal(schedulev2.ReasonCalendarNotFound))
		g.Expect(ready.Message).To(ContainSubstring("ConfigMap " + ns + "/holidays-ics not found"))
	}).Should(Succeed())

	cm := icsConfigMap(ns, "holidays-ics", ics("BEGIN:VEVENT", "SUMMARY:Closed", "DTSTART;VALUE=DATE:20260310", "END:VEVENT"), false)
	g.Expect(c.Create(bg, cm)).To(Succeed())
	// Unlabelled, its creation reaches no watch: a spec change reconciles.
	patch(g, c, tds, `{"spec":{"defaultReplicas":4}}`)
	g.Eventually(func(g Gomega) string { return readyOf(g, c, tds).Message }).Should(ContainSubstring(
		"ConfigMap " + ns + "/holidays-ics lacks the label multi-operator.dev/watch=true"))

	patch(g, c, cm, `{"metadata":{"labels":{"multi-operator.dev/watch":"true"}}}`)
	g.Eventually(func(g Gomega) {
		g.Expect(fetch(g, c, tds).Status.ActiveRule).To(Equal("calendar Calendar/holidays Closed 2026-03-10"))
		g.Expect(replicasOf(g, c, ns, "shop")).To(Equal(int32(0)))
	}).Should(Succeed())
}

// A ClusterCalendar imports from the ConfigMap of the namespace it names,
// and a change there reaches the TDSets of every namespace that use it.
func TestClusterCalendarImportsFromItsNamespace(t *testing.T) {
	_, c, ns := testenv.StartController(t, tdset.Descriptor(), reconciler.Options{Clock: clocktesting.NewFakeClock(office)}, testenv.ManagerOptions{})
	g := NewWithT(t)
	other := testenv.Get(t).Namespace(t)
	cm := icsConfigMap(other, "public-ics", ics("BEGIN:VEVENT", "SUMMARY:New Year", "DTSTART;VALUE=DATE:20260101", "END:VEVENT"), true)
	g.Expect(c.Create(bg, cm)).To(Succeed())
	ccal := &schedulev2.ClusterCalendar{ObjectMeta: metav1.ObjectMeta{Name: "public-" + ns}, Spec: schedulev2.CalendarSpec{
		Source: &schedulev2.CalendarSource{ConfigMapRef: schedulev2.ConfigMapKeyRef{Namespace: other, Name: "public-ics", Key: "holidays.ics"}},
	}}
	g.Expect(c.Create(bg, ccal)).To(Succeed())
	t.Cleanup(func() { _ = c.Delete(bg, ccal) })
	tds := builders.TDSet(ns, "shop").Obj()
	tds.Spec.Calendars = []schedulev2.CalendarRef{{Kind: schedulev2.CalendarKindCluster, Name: ccal.Name, Replicas: ptr.To[int32](2)}}
	g.Expect(c.Create(bg, tds)).To(Succeed())
	g.Eventually(func(g Gomega) int32 { return replicasOf(g, c, ns, "shop") }).Should(Equal(int32(5)))

	cm.Data["holidays.ics"] = ics("BEGIN:VEVENT", "SUMMARY:Strike", "DTSTART;VALUE=DATE:20260310", "END:VEVENT")
	g.Expect(c.Update(bg, cm)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(replicasOf(g, c, ns, "shop")).To(Equal(int32(2)), "the reference's count, the source having none")
		g.Expect(fetch(g, c, tds).Status.ActiveRule).To(Equal("calendar ClusterCalendar/" + ccal.Name + " Strike 2026-03-10"))
	}).Should(Succeed())
}

// A Calendar's source is its own namespace's ConfigMap even when an object
// stored without the schema's check names another: a tenant cannot make
// the manager read another tenant's ConfigMap. A ClusterCalendar's is the
// namespace it names.
func TestSourceIndexKeepsACalendarInItsNamespace(t *testing.T) {
	g := NewWithT(t)
	ref := schedulev2.ConfigMapKeyRef{Namespace: "other", Name: "holidays-ics", Key: "holidays.ics"}
	cal := &schedulev2.Calendar{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "holidays"},
		Spec: schedulev2.CalendarSpec{Source: &schedulev2.CalendarSource{ConfigMapRef: ref}}}
	g.Expect(tdset.IndexSource(cal)).To(Equal([]string{"shop/holidays-ics"}))
	ccal := &schedulev2.ClusterCalendar{ObjectMeta: metav1.ObjectMeta{Name: "public"},
		Spec: schedulev2.CalendarSpec{Source: &schedulev2.CalendarSource{ConfigMapRef: ref}}}
	g.Expect(tdset.IndexSource(ccal)).To(Equal([]string{"other/holidays-ics"}))
	g.Expect(tdset.IndexSource(&schedulev2.Calendar{})).To(BeEmpty(), "no source, no key")
}
