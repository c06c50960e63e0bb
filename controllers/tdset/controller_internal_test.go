package tdset

import (
	"testing"
	"time"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/schedule"
	"github.com/multi-operator/multi-operator/test/builders"
)

func TestRequeueAfter(t *testing.T) {
	now := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		interval int32
		next     time.Duration
		want     time.Duration
	}{
		{name: "until the boundary", next: 7 * time.Hour, want: 7 * time.Hour},
		{name: "exactly, to the nanosecond", next: 800 * time.Millisecond, want: 800 * time.Millisecond},
		{name: "intervalMint caps", interval: 30, next: 7 * time.Hour, want: 30 * time.Minute},
		{name: "intervalMint does not delay", interval: 30, next: 10 * time.Minute, want: 10 * time.Minute},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tds := builders.TDSet("ns", "x").IntervalMint(tc.interval).Obj()
			g.Expect(requeueAfter(tds, now.Add(tc.next), now)).To(Equal(tc.want))
		})
	}
}

func TestWindowsAndSource(t *testing.T) {
	g := NewWithT(t)
	tds := builders.TDSet("ns", "x").Windows(schedulev1.SchedulingConfig{StartTime: 9, EndTime: 17, Replica: 5}, schedulev1.SchedulingConfig{StartTime: 19, EndTime: 0, Replica: 2}).Obj()
	g.Expect(Windows(tds)).To(Equal([]schedule.Window{{StartHour: 9, EndHour: 17, Replicas: 5}, {StartHour: 19, EndHour: 0, Replicas: 2}}))
	g.Expect(source(tds, 1)).To(Equal("window 19-0"))
	g.Expect(source(tds, schedule.Default)).To(Equal("defaultReplica"))
}

func TestReportReady(t *testing.T) {
	for _, tc := range []struct {
		name    string
		suspend bool
		gen     int64
		status  appsv1.DeploymentStatus
		ready   metav1.ConditionStatus
		reason  string
		message string
	}{
		{name: "all available", gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 5, AvailableReplicas: 5}, ready: metav1.ConditionTrue, reason: schedulev1.ReasonAvailable, message: "5/5 replicas available"},
		{name: "scaling up", gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 5, AvailableReplicas: 3}, ready: metav1.ConditionFalse, reason: schedulev1.ReasonProgressing, message: "3/5 replicas available"},
		{name: "scaling down counts as available", gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 7, AvailableReplicas: 7}, ready: metav1.ConditionTrue, reason: schedulev1.ReasonAvailable},
		{name: "spec not yet seen", gen: 3, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 5, AvailableReplicas: 5}, ready: metav1.ConditionFalse, reason: schedulev1.ReasonProgressing},
		{name: "rolling out a new image", gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 2, AvailableReplicas: 5}, ready: metav1.ConditionFalse, reason: schedulev1.ReasonProgressing},
		{name: "suspended", suspend: true, gen: 2, status: appsv1.DeploymentStatus{ObservedGeneration: 2, UpdatedReplicas: 5, AvailableReplicas: 5}, ready: metav1.ConditionTrue, reason: schedulev1.ReasonAvailable, message: "5/5 replicas available (the count kept while suspended)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			tds := builders.TDSet("ns", "x").Suspend(tc.suspend).Obj()
			dep := DesiredDeployment(tds, 5)
			dep.Generation = tc.gen
			dep.Status = tc.status
			reportReady(tds, dep)
			c := conditions.Get(tds, conditions.Ready)
			g.Expect(c.Status).To(Equal(tc.ready))
			g.Expect(c.Reason).To(Equal(tc.reason))
			if tc.message != "" {
				g.Expect(c.Message).To(Equal(tc.message))
			}
		})
	}
}
