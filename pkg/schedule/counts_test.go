package schedule_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/schedule"
)

func TestCounts(t *testing.T) {
	for _, tc := range []struct {
		name            string
		cal             schedule.Calendar
		lowest, highest int32
	}{
		{name: "default only", cal: schedule.Calendar{Default: 3}, lowest: 3, highest: 3},
		{name: "a window above", cal: schedule.Calendar{Default: 3, Windows: []schedule.Window{{Replicas: 5}}}, lowest: 3, highest: 5},
		{name: "a window below", cal: schedule.Calendar{Default: 3, Windows: []schedule.Window{{Replicas: 0}, {Replicas: 4}}}, lowest: 0, highest: 4},
		{name: "an exception beyond the windows", cal: schedule.Calendar{Default: 2, Windows: []schedule.Window{{Replicas: 4}}, Exceptions: []schedule.Exception{exc(t, "2026-12-24", 7)}}, lowest: 2, highest: 7},
		{name: "the override counts too", cal: schedule.Calendar{Default: 2, Override: &schedule.Override{Replicas: 1, Until: time.Now()}}, lowest: 1, highest: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lowest, highest := tc.cal.Counts()
			NewWithT(t).Expect([]int32{lowest, highest}).To(Equal([]int32{tc.lowest, tc.highest}))
		})
	}
}
