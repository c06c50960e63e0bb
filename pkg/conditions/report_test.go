package conditions

import (
	"errors"
	"fmt"
	"testing"

	. "github.com/onsi/gomega"

	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/ownership"
)

func TestReportApplyError(t *testing.T) {
	for _, tc := range []struct {
		name       string
		err        error
		reason     string
		retryAfter bool
		returned   bool
	}{
		{
			name:       "a conflict is shown and looked at again, not retried with backoff",
			err:        fmt.Errorf("applying: %w", &ownership.ConflictError{Kind: "Deployment", Name: "child"}),
			reason:     ReasonResourceConflict,
			retryAfter: true,
		},
		{
			name:     "any other error is shown and returned for backoff",
			err:      errors.New("boom"),
			reason:   ReasonApplyFailed,
			returned: true,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			obj := &object{}
			retryAfter, err := ReportApplyError(events.Recorder{}, obj, tc.err)
			g.Expect(ApplyFailureReason(tc.err)).To(Equal(tc.reason))
			g.Expect(Get(obj, Ready).Reason).To(Equal(tc.reason))
			g.Expect(Get(obj, Ready).Message).To(Equal(tc.err.Error()))
			if tc.retryAfter {
				g.Expect(retryAfter).To(Equal(ConflictRetryInterval))
			} else {
				g.Expect(retryAfter).To(BeZero())
			}
			if tc.returned {
				g.Expect(err).To(MatchError(tc.err))
			} else {
				g.Expect(err).NotTo(HaveOccurred())
			}
		})
	}
}
