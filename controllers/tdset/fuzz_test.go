package tdset_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	schedulev1 "github.com/multi-operator/multi-operator/apis/schedule/v1"
	schedulev2 "github.com/multi-operator/multi-operator/apis/schedule/v2"
	"github.com/multi-operator/multi-operator/controllers/tdset"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/test/framework/builders"
)

// FuzzV1AdmittedPassesV2 writes v1 objects whose annotation carries v2-only
// fields, in and out of v2's bounds, whole, edited or damaged, and converts
// them as the API server does for the webhook. Whatever the webhook admits
// must pass v2's schema and CEL rules, as the API server checks them on a
// v2 write (the generated CRD, validated in process), and carry no
// unapplied annotation (issue #40).
func FuzzV1AdmittedPassesV2(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("tdset"))
	for seed := range uint64(32) {
		f.Add(binary.LittleEndian.AppendUint64(nil, seed*0x9e3779b97f4a7c15))
	}
	schema := loadV2Schema(f)
	v := &tdset.Validator{Clock: clocktesting.NewFakeClock(office)}
	f.Fuzz(func(t *testing.T, data []byte) {
		h := fnv.New64a()
		h.Write(data)
		r := rand.New(rand.NewPCG(h.Sum64(), uint64(len(data))))
		in := genV1WithV2Data(r)
		hub := &schedulev2.TDSet{}
		if err := in.ConvertTo(hub); err != nil {
			t.Fatalf("ConvertTo: %v", err)
		}
		if _, err := v.ValidateCreate(context.Background(), hub); err != nil {
			return
		}
		if err := schedulev1.V2DataProblem(hub); err != nil {
			t.Fatalf("admitted with an unapplied annotation: %v", err)
		}
		if errs := schedulev2.Validate(hub); len(errs) > 0 {
			t.Fatalf("admitted, but schedulev2.Validate says: %v", errs.ToAggregate())
		}
		if errs := schema.validate(t, hub); len(errs) > 0 {
			t.Fatalf("admitted, but v2's schema says: %v\nannotation: %s", errs, in.Annotations[schedulev1.AnnotationV2Data])
		}
	})
}

// genV1WithV2Data is a v1 object within v1's schema (the API server checks
// that one) with an annotation from a v2 object, as ConvertFrom writes it
// or changed after.
func genV1WithV2Data(r *rand.Rand) *schedulev1.TDSet {
	w := builders.TDSet("ns", pick(r, "web", "9to5.x"))
	w.DefaultReplicas(rarely(r, int32(1+r.IntN(5)), 1000))
	w.TimeZone(pick(r, "UTC", "Europe/Berlin", "Mars/Olympus_Mons"))
	if oneIn(r, 3) {
		w.ServicePort(int32(1 + r.IntN(65535)))
	}
	n := r.IntN(4)
	if oneIn(r, 8) {
		n = 60 + r.IntN(10)
	}
	for i := range n {
		m := i % 60
		days := []schedulev2.Weekday{rarely(r, pick[schedulev2.Weekday](r, "Mon", "Sun"), "Monday")}
		if oneIn(r, 20) {
			days = append(days, days[0])
		}
		w.Spec.Windows = append(w.Spec.Windows, builders.Window(
			fmt.Sprintf("00:%02d", m), rarely(r, fmt.Sprintf("%02d:%02d", (m+1)/60, (m+1)%60), pick(r, "00:00", "24:00", "0:30")), count(r), days...))
	}
	if oneIn(r, 3) {
		// A window over days, clear of the windows above (Mon and Sun
		// after midnight), and now and then without its one start day,
		// empty, or with an end day spelt out.
		over := builders.WindowOver(rarely[schedulev2.Weekday](r, "Tue", "Wed"), "12:00", pick[schedulev2.Weekday](r, "Thu", "Tue", rarely[schedulev2.Weekday](r, "Thu", "Thursday")), pick(r, "00:00", "12:00", "06:30"), count(r))
		switch r.IntN(12) {
		case 0:
			over.Days = nil
		case 1:
			over.Days = append(over.Days, "Wed")
		}
		w.Spec.Windows = append(w.Spec.Windows, over)
	}
	n = r.IntN(3)
	if oneIn(r, 8) {
		n = 395 + r.IntN(10)
	}
	day := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		w.Exception(rarely(r, day.AddDate(0, 0, i).Format(time.DateOnly), pick(r, "2030-13-01", "2030-02-30")), count(r))
	}
	// Calendar references: now and then too many, one twice (once by the
	// default kind), of a kind or name the schema refuses.
	n = r.IntN(3)
	if oneIn(r, 8) {
		n = 8 + r.IntN(2)
	}
	for i := range n {
		kind := pick(r, "", schedulev2.CalendarKindNamespaced, schedulev2.CalendarKindCluster, rarely[schedulev2.CalendarKind](r, "Calendar", "ConfigMap"))
		name := rarely(r, fmt.Sprintf("cal-%d", pick(r, i, 0)), pick(r, "Holidays", "", "a..b"))
		ref := schedulev2.CalendarRef{Kind: kind, Name: name}
		if oneIn(r, 3) {
			ref.Replicas = ptr.To(count(r))
		}
		w.Spec.Calendars = append(w.Spec.Calendars, ref)
	}
	if oneIn(r, 3) {
		w.Override(count(r), rarely(r, farFuture, office.Add(-time.Hour)))
	}
	if oneIn(r, 3) {
		w.Autoscaling(rarely(r, 1000, count(r)))
		if oneIn(r, 2) {
			w.Spec.Autoscaling.TargetCPUUtilizationPercentage = ptr.To(rarely(r, 70, count(r)))
		}
		// An existing HPA: mostly with a scale target, now and then
		// without maxReplicas, with a CPU target or with a bad name.
		if oneIn(r, 3) {
			w.Spec.Autoscaling.HPARef = &schedulev2.HPARef{Name: rarely(r, "web-hpa", pick(r, "", "A/b"))}
			if !oneIn(r, 6) {
				w.ScaleTarget("apps/v1", "Deployment", "web")
			}
			if oneIn(r, 2) {
				w.Spec.Autoscaling.MaxReplicas = 0
			}
		}
	}
	odd := []time.Duration{-time.Minute, 0, time.Nanosecond, 30 * time.Second, 25 * time.Hour}
	if oneIn(r, 2) {
		w.Spec.ScaleUpLeadTime = &metav1.Duration{Duration: rarely(r, pick(r, 0, 2*time.Minute, 24*time.Hour), pick(r, odd...))}
	}
	if oneIn(r, 2) {
		w.Spec.ResyncInterval = &metav1.Duration{Duration: rarely(r, pick(r, time.Minute, 90*time.Second, 24*time.Hour), pick(r, odd...))}
	}
	out := &schedulev1.TDSet{}
	if err := out.ConvertFrom(w.Obj()); err != nil {
		panic(err)
	}
	// v1's schema: an intervalMint out of range is not admitted, and
	// schedulingConfig needs a window.
	out.Spec.IntervalMint = min(max(out.Spec.IntervalMint, 0), 1440)
	if len(out.Spec.SchedulingConfig) == 0 {
		out.Spec.SchedulingConfig = []schedulev1.SchedulingConfig{{StartTime: 9, EndTime: 17, Replica: 1}}
	}
	if raw, ok := out.Annotations[schedulev1.AnnotationV2Data]; ok {
		switch r.IntN(12) {
		case 0: // cut
			out.Annotations[schedulev1.AnnotationV2Data] = raw[:r.IntN(len(raw)+1)]
		case 1: // a field of another spelling
			out.Annotations[schedulev1.AnnotationV2Data] = `{"ResyncInterval":"1ns",` + raw[1:]
		case 2: // v1 edited
			out.Spec.SchedulingConfig[0].Replica++
		}
	}
	return out
}

func pick[T any](r *rand.Rand, options ...T) T { return options[r.IntN(len(options))] }

// rarely is usual, and now and then odd, so that most objects are admitted
// and each rule is still broken on its own.
func rarely[T any](r *rand.Rand, usual, odd T) T {
	if oneIn(r, 12) {
		return odd
	}
	return usual
}

// count is a replica count: mostly 1-5, now and then out of v2's range.
func count(r *rand.Rand) int32 {
	return rarely(r, int32(1+r.IntN(5)), pick[int32](r, -1, 0, 1000, 1001))
}

func oneIn(r *rand.Rand, n int) bool { return r.IntN(n) == 0 }

// v2Schema is the generated CRD's v2 schema with its CEL rules, as the API
// server applies them to a v2 write.
type v2Schema struct {
	props      *apiextensionsinternal.JSONSchemaProps
	structural *structuralschema.Structural
}

// loadV2Schema reads the v2 schema from the CRD in config/crd/bases.
func loadV2Schema(tb testing.TB) *v2Schema {
	root, err := reporoot.Find()
	if err != nil {
		tb.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(root, "config/crd/bases/schedule.rs_tdsets/schedule.rs_tdsets.yaml"))
	if err != nil {
		tb.Fatal(err)
	}
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := yaml.Unmarshal(raw, crd); err != nil {
		tb.Fatal(err)
	}
	for _, v := range crd.Spec.Versions {
		if v.Name != "v2" {
			continue
		}
		props := &apiextensionsinternal.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, props, nil); err != nil {
			tb.Fatal(err)
		}
		structural, err := structuralschema.NewStructural(props)
		if err != nil {
			tb.Fatal(err)
		}
		return &v2Schema{props: props, structural: structural}
	}
	tb.Fatal("the CRD has no version v2")
	return nil
}

// validate checks obj as the API server checks a v2 create: the OpenAPI
// schema, then the CEL rules.
func (s *v2Schema) validate(t *testing.T, obj *schedulev2.TDSet) []string {
	// Integers as int64, as the API server decodes them for CEL.
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		t.Fatal(err)
	}
	validator, _, err := apiservervalidation.NewSchemaValidator(s.props)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range apiservervalidation.ValidateCustomResource(nil, u, validator) {
		out = append(out, e.Error())
	}
	celErrs, _ := cel.NewValidator(s.structural, true, celconfig.PerCallLimit).Validate(context.Background(), nil, s.structural, u, nil, celconfig.RuntimeCELCostBudget)
	for _, e := range celErrs {
		out = append(out, e.Error())
	}
	return out
}
