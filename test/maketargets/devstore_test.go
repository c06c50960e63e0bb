package maketargets

import (
	"bytes"
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
	"github.com/multi-operator/multi-operator/pkg/objectstore"
)

// TestDevStoreServesBackupsWithItsOwnCredentials holds make dev-store to
// what docs/rediscluster.md tells a user: without a local cluster it
// serves S3 on loopback, the Secret it writes is labelled for the operator
// and holds credentials the store accepts (a write and a verified read
// through pkg/objectstore), buckets come on first use, and make
// dev-store-down stops it and removes its data.
func TestDevStoreServesBackupsWithItsOwnCredentials(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	reporoottest.RequireToolBinary(t, root, "SEAWEEDFS", "seaweedfs", "weed")
	dir := t.TempDir()
	clusterDir := filepath.Join(dir, "cluster")
	storeDir := filepath.Join(clusterDir, "store")
	run := func(target string) (string, error) {
		cmd := exec.Command("make", "--no-print-directory", target, "CLUSTER_DIR="+clusterDir)
		cmd.Dir = root
		// No kubeconfig reaches a cluster: the store takes loopback.
		cmd.Env = makeEnv(filepath.Join(dir, "no-kubeconfig"), dir)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}
	t.Cleanup(func() { _, _ = run("dev-store-down") })

	out, err := run("dev-store")
	g.Expect(err).NotTo(HaveOccurred(), "make dev-store:\n%s", out)
	g.Expect(out).To(ContainSubstring("http://127.0.0.1:8333"))
	out, err = run("dev-store")
	g.Expect(err).NotTo(HaveOccurred(), "make dev-store again:\n%s", out)
	g.Expect(out).To(ContainSubstring("already runs"))

	raw, err := os.ReadFile(filepath.Join(storeDir, "credentials.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	var secret corev1.Secret
	g.Expect(yaml.UnmarshalStrict(raw, &secret)).To(Succeed())
	g.Expect(secret.Labels).To(HaveKeyWithValue("multi-operator.dev/watch", "true"))
	info, err := os.Stat(filepath.Join(storeDir, "credentials.yaml"))
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(info.Mode().Perm()).To(Equal(os.FileMode(0o600)), "the credentials are the user's alone")

	store, err := objectstore.New(objectstore.Config{
		Endpoint: "127.0.0.1:8333", Bucket: "backups", Prefix: "team-a", Region: "us-east-1", Insecure: true,
		AccessKey: secret.StringData["accessKeyID"], SecretKey: secret.StringData["secretAccessKey"],
	})
	g.Expect(err).NotTo(HaveOccurred())
	defer store.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	// The filer and a volume may come up a moment after the gateway listens.
	g.Eventually(func() error {
		_, err := store.Upload(ctx, "probe", strings.NewReader("backup bytes"))
		return err
	}, "60s", "500ms").Should(Succeed(), "an upload into a bucket that did not exist")
	r, _, err := store.Open(ctx, "probe")
	g.Expect(err).NotTo(HaveOccurred())
	data, err := io.ReadAll(r)
	g.Expect(err).NotTo(HaveOccurred(), "the read verifies the recorded SHA-256")
	g.Expect(r.Close()).To(Succeed())
	g.Expect(string(data)).To(Equal("backup bytes"))

	wrong, err := objectstore.New(objectstore.Config{Endpoint: "127.0.0.1:8333", Bucket: "backups", Prefix: "team-a",
		Region: "us-east-1", Insecure: true, AccessKey: "dev-backups", SecretKey: "guessed"})
	g.Expect(err).NotTo(HaveOccurred())
	defer wrong.Close()
	_, _, err = wrong.Open(ctx, "probe")
	g.Expect(err).To(HaveOccurred(), "the store accepts only its own credentials")

	out, err = run("dev-store-down")
	g.Expect(err).NotTo(HaveOccurred(), "make dev-store-down:\n%s", out)
	_, err = net.DialTimeout("tcp", "127.0.0.1:8333", time.Second)
	g.Expect(err).To(HaveOccurred(), "the store still listens after make dev-store-down")
	g.Expect(storeDir).NotTo(BeADirectory(), "its data is removed")
}
