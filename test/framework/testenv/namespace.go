package testenv

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Namespace creates a namespace of its own for one test. envtest runs no
// namespace controller, so objects in it are not cleaned up; each test works
// in a fresh one instead.
func (e *Env) Namespace(t testing.TB) string {
	t.Helper()
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{GenerateName: namespacePrefix(t.Name())}}
	if err := e.Client.Create(context.Background(), ns); err != nil {
		t.Fatalf("creating namespace: %v", err)
	}
	return ns.Name
}

// namespacePrefix makes a namespace's generateName of a test's name: lower
// case, every character a DNS label may not hold (subtests' names carry
// spaces, commas and the like) as '-', at most 40 of them, ending in '-'.
func namespacePrefix(testName string) string {
	name := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r - 'A' + 'a'
		}
		return '-'
	}, testName)
	if len(name) > 40 {
		name = name[:40]
	}
	return strings.Trim(name, "-") + "-"
}
