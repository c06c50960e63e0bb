package rediscluster_test

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

func TestMigrationStatus(t *testing.T) {
	now := time.Date(2026, 11, 28, 6, 0, 0, 500_000_000, time.UTC)
	measuredAt := metav1.NewTime(now.Truncate(time.Second))
	for _, tc := range []struct {
		name string
		in   redisadmin.Migration
		want *cachev1.MigrationStatus
	}{
		{name: "nothing moved", in: redisadmin.Migration{}},
		{name: "empty slots moved quickly", in: redisadmin.Migration{Slots: 64, Keys: 10, Duration: 40 * time.Millisecond}},
		{name: "slots without time", in: redisadmin.Migration{Slots: 64, Keys: 5000}},
		{
			name: "many keys quickly",
			in:   redisadmin.Migration{Slots: 6554, Keys: 4000, Bytes: 400_000, Duration: 500 * time.Millisecond},
			want: &cachev1.MigrationStatus{Slots: 6554, Keys: 4000, Bytes: 400_000, Duration: metav1.Duration{Duration: 500 * time.Millisecond},
				KeysPerSecond: 8000, BytesPerSecond: 800_000, SlotsPerMinute: 786_480, MeasuredAt: measuredAt},
		},
		{
			name: "few keys slowly",
			in:   redisadmin.Migration{Slots: 120, Keys: 30, Duration: 2 * time.Minute},
			want: &cachev1.MigrationStatus{Slots: 120, Keys: 30, Duration: metav1.Duration{Duration: 2 * time.Minute},
				KeysPerSecond: 0, SlotsPerMinute: 60, MeasuredAt: measuredAt},
		},
		{
			name: "duration rounded to the millisecond",
			in:   redisadmin.Migration{Slots: 16384, Keys: 1_000_000, Bytes: 0, Duration: 10*time.Second + 1234*time.Microsecond},
			want: &cachev1.MigrationStatus{Slots: 16384, Keys: 1_000_000, Duration: metav1.Duration{Duration: 10*time.Second + time.Millisecond},
				KeysPerSecond: 99987, SlotsPerMinute: 98291, MeasuredAt: measuredAt},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			g.Expect(rediscluster.MigrationStatus(tc.in, now)).To(Equal(tc.want))
		})
	}
}
