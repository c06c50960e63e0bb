package main

import (
	"context"
	"net/http/httptest"
	"testing"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/cache"

	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// TestReadyOnceInformersSynced: the manager's ready check fails while an
// informer started by then has not listed its kind yet, and passes once it
// has, and from then on, also while an informer started later still
// lists.
func TestReadyOnceInformersSynced(t *testing.T) {
	g := NewWithT(t)
	env := testenv.Get(t)
	c, err := cache.New(env.Config, cache.Options{Scheme: env.Scheme})
	g.Expect(err).NotTo(HaveOccurred())
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	_, err = c.GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false))
	g.Expect(err).NotTo(HaveOccurred())
	check := cachesSynced(c)
	probe := func() error { return check(httptest.NewRequest("GET", "/readyz", nil)) }

	g.Expect(probe()).To(MatchError(ContainSubstring("not synced")), "not ready before the cache starts")
	go func() { _ = c.Start(ctx) }()
	g.Eventually(probe).Should(Succeed())

	_, err = c.GetInformer(ctx, &corev1.Secret{}, cache.BlockUntilSynced(false))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(probe()).To(Succeed(), "a later informer does not make a ready manager unready")
}
