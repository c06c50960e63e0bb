package tdset

import (
	"errors"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/pkg/schedule"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

func TestCalendar(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Fatal(err)
	}
	until := time.Date(2026, 11, 30, 18, 0, 0, 0, time.UTC)
	weekdays := schedule.NewWeekdays(time.Monday, time.Tuesday, time.Wednesday, time.Thursday, time.Friday)
	for _, tc := range []struct {
		name   string
		tds    *schedulev2.TDSet
		want   *schedule.Calendar
		reason string   // a SpecError's reason
		errs   []string // what its message says, each
	}{
		{
			name: "the original's windows, every day in UTC",
			tds:  builders.TDSet("ns", "x").Obj(),
			want: &schedule.Calendar{Location: time.UTC, Default: 3, Windows: []schedule.Window{
				{Start: 9 * 60, End: 17 * 60, Replicas: 5},
				{Start: 17 * 60, End: 19 * 60, Replicas: 3},
				{Start: 19 * 60, End: 0, Replicas: 2},
				{Start: 1 * 60, End: 7 * 60, Replicas: 2},
				{Start: 7 * 60, End: 9 * 60, Replicas: 3},
			}},
		},
		{
			name: "an empty zone is UTC",
			tds:  builders.TDSet("ns", "x").TimeZone("").Windows().DefaultReplicas(0).Obj(),
			want: &schedule.Calendar{Location: time.UTC},
		},
		{
			name: "every part of v2",
			tds: builders.TDSet("ns", "x").TimeZone("Europe/Berlin").DefaultReplicas(2).Windows(
				builders.Window("08:30", "18:00", 6, "Mon", "Tue", "Wed", "Thu", "Fri"),
				builders.Window("22:00", "02:00", 1, "Sat", "Sun"),
				builders.Window("23:59", "00:00", 4, "Mon", "Mon"),
			).Exception("2026-12-25", 1).Exception("2028-02-29", 0).Override(9, until).ScaleUpLeadTime(2 * time.Minute).ResyncInterval(time.Hour).Autoscaling(12).Obj(),
			want: &schedule.Calendar{
				Location: berlin, Default: 2,
				Windows: []schedule.Window{
					{Days: weekdays, Start: 8*60 + 30, End: 18 * 60, Replicas: 6},
					{Days: schedule.NewWeekdays(time.Saturday, time.Sunday), Start: 22 * 60, End: 2 * 60, Replicas: 1},
					{Days: schedule.NewWeekdays(time.Monday), Start: 23*60 + 59, End: 0, Replicas: 4},
				},
				Exceptions: []schedule.Exception{{Date: schedule.Date{Year: 2026, Month: 12, Day: 25}, Replicas: 1}, {Date: schedule.Date{Year: 2028, Month: 2, Day: 29}}},
				Override:   &schedule.Override{Replicas: 9, Until: until},
				LeadTime:   2 * time.Minute,
			},
		},
		{
			name: "a window over days",
			tds:  builders.TDSet("ns", "x").DefaultReplicas(1).Windows(builders.WindowOver("Fri", "18:00", "Mon", "06:00", 4)).Obj(),
			want: &schedule.Calendar{Location: time.UTC, Default: 1, Windows: []schedule.Window{
				{Days: schedule.NewWeekdays(time.Friday), Start: 18 * 60, End: 6 * 60, MultiDay: true, EndDay: time.Monday, Replicas: 4},
			}},
		},
		{
			name:   "an end day spelt out",
			tds:    builders.TDSet("ns", "x").Windows(builders.WindowOver("Fri", "18:00", "Monday", "06:00", 4)).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs:   []string{`spec.windows[0]: endDay: unknown weekday "Monday"`},
		},
		{
			name: "a window over days overlaps a window of one day",
			tds: builders.TDSet("ns", "x").Windows(
				builders.WindowOver("Fri", "18:00", "Mon", "06:00", 4),
				builders.Window("10:00", "12:00", 3, "Sun"),
			).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs:   []string{"windows Fri 18:00-Mon 06:00 and Sun 10:00-12:00 overlap on Sun"},
		},
		{
			name:   "an unknown zone",
			tds:    builders.TDSet("ns", "x").TimeZone("Mars/Olympus_Mons").Obj(),
			reason: schedulev2.ReasonInvalidTimeZone,
			errs:   []string{`spec.timeZone: unknown time zone "Mars/Olympus_Mons"`},
		},
		{
			name:   "the controller's own zone",
			tds:    builders.TDSet("ns", "x").TimeZone("Local").Obj(),
			reason: schedulev2.ReasonInvalidTimeZone,
			errs:   []string{`spec.timeZone: "Local" is the controller's own time zone`},
		},
		{
			// The zone is checked first: a schedule that is wrong too is
			// reported once the zone is fixed.
			name:   "an unknown zone and overlapping windows",
			tds:    builders.TDSet("ns", "x").TimeZone("Europe/Berlln").Windows(builders.Window("09:00", "17:00", 5), builders.Window("10:00", "11:00", 5)).Obj(),
			reason: schedulev2.ReasonInvalidTimeZone,
			errs:   []string{`unknown time zone "Europe/Berlln"`},
		},
		{
			name: "overlapping windows on a weekday",
			tds: builders.TDSet("ns", "x").Windows(
				builders.Window("08:30", "18:00", 5, "Mon"),
				builders.Window("17:00", "20:00", 3, "Mon", "Tue"),
			).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs:   []string{"windows Mon 08:30-18:00 and Mon,Tue 17:00-20:00 overlap on Mon"},
		},
		{
			name: "a wrapping window overlaps the next day's",
			tds: builders.TDSet("ns", "x").Windows(
				builders.Window("22:00", "02:00", 5, "Fri"),
				builders.Window("01:00", "03:00", 3, "Sat"),
			).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs:   []string{"windows Fri 22:00-02:00 and Sat 01:00-03:00 overlap on Sat"},
		},
		{
			name: "windows on different days do not overlap",
			tds: builders.TDSet("ns", "x").DefaultReplicas(1).Windows(
				builders.Window("22:00", "02:00", 5, "Fri"),
				builders.Window("01:00", "03:00", 3, "Fri"),
			).Obj(),
			want: &schedule.Calendar{Location: time.UTC, Default: 1, Windows: []schedule.Window{
				{Days: schedule.NewWeekdays(time.Friday), Start: 22 * 60, End: 2 * 60, Replicas: 5},
				{Days: schedule.NewWeekdays(time.Friday), Start: 60, End: 3 * 60, Replicas: 3},
			}},
		},
		{
			name:   "an empty window",
			tds:    builders.TDSet("ns", "x").Windows(builders.Window("09:00", "09:00", 5)).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs:   []string{"window every day 09:00-09:00 is empty"},
		},
		{
			name:   "a repeated exception date",
			tds:    builders.TDSet("ns", "x").Exception("2026-12-25", 1).Exception("2026-12-24", 2).Exception("2026-12-25", 0).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs:   []string{"exception date 2026-12-25 appears twice"},
		},
		{
			name:   "a date that does not exist",
			tds:    builders.TDSet("ns", "x").Exception("2026-02-29", 1).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs:   []string{`spec.exceptions[0].date: invalid date "2026-02-29": no such day`},
		},
		{
			// Only an object stored before the schema checked it holds these.
			name: "times and days the schema rejects",
			tds: builders.TDSet("ns", "x").Windows(
				builders.Window("24:00", "02:00", 5),
				builders.Window("08:00", "8:30", 5),
				builders.Window("08:00", "09:00", 5, "Monday"),
			).Exception("25.12.2026", 1).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs: []string{
				`spec.windows[0]: start: invalid time "24:00"`,
				`spec.windows[1]: end: invalid time "8:30"`,
				`spec.windows[2]: days: unknown weekday "Monday"`,
				`spec.exceptions[0].date: invalid date "25.12.2026"`,
			},
		},
		{
			name:   "a lead time over a day",
			tds:    builders.TDSet("ns", "x").ScaleUpLeadTime(25 * time.Hour).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs:   []string{"scaleUpLeadTime must be at most 24h0m0s"},
		},
		{
			name:   "several problems at once",
			tds:    builders.TDSet("ns", "x").Windows(builders.Window("09:00", "17:00", 5), builders.Window("16:00", "18:00", -1)).Exception("2026-12-25", 1).Exception("2026-12-25", 1).Obj(),
			reason: schedulev2.ReasonInvalidSchedule,
			errs: []string{
				"windows every day 09:00-17:00 and every day 16:00-18:00 overlap on every day",
				"window every day 16:00-18:00: replicas must not be negative",
				"exception date 2026-12-25 appears twice",
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			cal, err := Calendar(tc.tds)
			if tc.reason == "" {
				g.Expect(err).NotTo(HaveOccurred())
				g.Expect(cal.Location.String()).To(Equal(tc.want.Location.String()))
				cal.Location, tc.want.Location = nil, nil
				g.Expect(cal).To(Equal(tc.want))
				g.Expect(cal.Validate()).To(Succeed())
				return
			}
			g.Expect(cal).To(BeNil())
			var spec *SpecError
			g.Expect(errors.As(err, &spec)).To(BeTrue(), "a SpecError, got %T: %v", err, err)
			g.Expect(spec.Reason).To(Equal(tc.reason))
			g.Expect(errors.Unwrap(err)).To(Equal(spec.Err))
			for _, e := range tc.errs {
				g.Expect(err.Error()).To(ContainSubstring(e))
			}
		})
	}
}

// The override is converted as it is, also once it has ended: the calendar
// ignores it then.
func TestCalendarKeepsAnEndedOverride(t *testing.T) {
	g := NewWithT(t)
	ended := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	tds := builders.TDSet("ns", "x").Override(9, ended).Obj()
	cal, err := Calendar(tds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cal.Override).To(Equal(&schedule.Override{Replicas: 9, Until: ended}))
	g.Expect(cal.At(time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)).Replicas).To(Equal(int32(5)))

	tds.Spec.ScaleUpLeadTime = &metav1.Duration{}
	cal, err = Calendar(tds)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(cal.LeadTime).To(BeZero())
}
