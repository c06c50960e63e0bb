package tdset_test

import (
	"testing"

	"k8s.io/utils/ptr"

	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
)

// What a TDSet sets on the HPA it drives: the count as the floor,
// spec.autoscaling.maxReplicas when set, else the HPA's own maximum, which
// then caps the floor; suspended, the recorded originals.
func TestDesiredHPABounds(t *testing.T) {
	recorded := &schedulev2.AutoscalerStatus{Name: "web", OriginalMinReplicas: ptr.To[int32](2), OriginalMaxReplicas: ptr.To[int32](8)}
	ref := &schedulev2.HPARef{Name: "web"}
	for _, tc := range []struct {
		name       string
		a          *schedulev2.Autoscaling
		count, max int32
		suspended  bool
		want       tdset.HPABounds
	}{
		{"the count as the floor, the HPA's maximum kept", &schedulev2.Autoscaling{HPARef: ref}, 5, 8, false, tdset.HPABounds{Min: 5, Max: 8}},
		{"maxReplicas set", &schedulev2.Autoscaling{HPARef: ref, MaxReplicas: 12}, 5, 8, false, tdset.HPABounds{Min: 5, Max: 12}},
		{"maxReplicas set below the HPA's", &schedulev2.Autoscaling{HPARef: ref, MaxReplicas: 6}, 5, 8, false, tdset.HPABounds{Min: 5, Max: 6}},
		{"a count above the HPA's maximum is capped", &schedulev2.Autoscaling{HPARef: ref}, 9, 8, false, tdset.HPABounds{Min: 8, Max: 8, Capped: true}},
		{"a count at the HPA's maximum is not capped", &schedulev2.Autoscaling{HPARef: ref}, 8, 8, false, tdset.HPABounds{Min: 8, Max: 8}},
		{"a count of 0 (stored before admission checked it) is 1", &schedulev2.Autoscaling{HPARef: ref}, 0, 8, false, tdset.HPABounds{Min: 1, Max: 8}},
		{"suspended: the originals", &schedulev2.Autoscaling{HPARef: ref, MaxReplicas: 12}, 5, 12, true, tdset.HPABounds{Min: 2, Max: 8}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tdset.DesiredHPABounds(tc.a, tc.count, tc.max, tc.suspended, recorded); got != tc.want {
				t.Errorf("DesiredHPABounds = %+v, want %+v", got, tc.want)
			}
		})
	}
}
