package main

import (
	"bytes"
	"context"
	"errors"
	"testing"

	. "github.com/onsi/gomega"
	"k8s.io/client-go/rest"

	"github.com/multi-operator/multi-operator/pkg/storageversion"
)

func TestSummary(t *testing.T) {
	g := NewWithT(t)
	g.Expect(summary(storageversion.Result{CRD: "tdsets.schedule.rs", StorageVersion: "v2", Migrated: 3, StoredVersions: []string{"v2"}})).
		To(Equal("tdsets.schedule.rs: rewrote 3 objects in v2; storedVersions [v2]"))
	g.Expect(summary(storageversion.Result{CRD: "tdsets.schedule.rs", StorageVersion: "v2", Migrated: 1, Unchanged: 1, Gone: 2, StoredVersions: []string{"v2"}})).
		To(Equal("tdsets.schedule.rs: rewrote 1 object in v2 (1 already stored in it), 2 deleted meanwhile; storedVersions [v2]"))
}

func TestRunExitCodes(t *testing.T) {
	noConfig := func() (*rest.Config, error) { return nil, errors.New("no cluster here") }
	for _, tc := range []struct {
		args   []string
		code   int
		stderr string
	}{
		{args: []string{"--help"}, code: 0, stderr: "--crd"},
		{args: []string{"--nope"}, code: 2, stderr: "unknown flag: --nope"},
		{args: []string{"extra"}, code: 2, stderr: "unexpected arguments: extra"},
		{args: []string{"--crd", "a.b"}, code: 1, stderr: "loading the cluster's config: no cluster here"},
	} {
		g := NewWithT(t)
		var stdout, stderr bytes.Buffer
		g.Expect(run(context.Background(), tc.args, &stdout, &stderr, noConfig)).To(Equal(tc.code), "%v", tc.args)
		g.Expect(stderr.String()).To(ContainSubstring(tc.stderr), "%v", tc.args)
		g.Expect(stdout.String()).To(BeEmpty())
	}
}
