package rediscluster_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/apis/shared"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/hack/reporoot/reporoottest"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// exporterBinary is the real redis_exporter that make tools builds into
// bin/ (REDIS_EXPORTER names it under make).
func exporterBinary(t *testing.T) string {
	t.Helper()
	root, err := reporoot.Find()
	if err != nil {
		t.Fatal(err)
	}
	return reporoottest.RequireTool(t, root, "REDIS_EXPORTER", "redis_exporter")
}

// exporterProcess is a real redis_exporter that runExporter started.
type exporterProcess struct {
	c   client.Client
	sts *appsv1.StatefulSet
	s   *redistest.Server
	// container is the sidecar as the pod template has it.
	container corev1.Container
	// dir stands in for the mount of the Secret volume.
	dir string
	// base is the exporter's URL without a path.
	base string
}

// metrics is the URL of the exporter's /metrics.
func (e *exporterProcess) metrics() string { return e.base + "/metrics" }

// project writes the files of the Secret the sidecar's volume names into
// the mount's stand-in, as the kubelet projects them at start and after
// the Secret changed: each file is replaced whole. The pod's localhost
// becomes the test server's address.
func (e *exporterProcess) project(g Gomega) {
	ctx := context.Background()
	for _, v := range e.sts.Spec.Template.Spec.Volumes {
		if v.Name != e.container.VolumeMounts[0].Name {
			continue
		}
		secret := &corev1.Secret{}
		g.Expect(e.c.Get(ctx, client.ObjectKey{Namespace: e.sts.Namespace, Name: v.Secret.SecretName}, secret)).To(Succeed())
		for _, item := range v.Secret.Items {
			data := strings.ReplaceAll(string(secret.Data[item.Key]), "localhost:", e.s.Host+":")
			tmp := filepath.Join(e.dir, "."+item.Path)
			g.Expect(os.WriteFile(tmp, []byte(data), 0o600)).To(Succeed())
			g.Expect(os.Rename(tmp, filepath.Join(e.dir, item.Path))).To(Succeed())
		}
	}
}

// probe GETs the path of the sidecar's liveness probe, as the kubelet
// does, and returns the status code.
func (e *exporterProcess) probe(g Gomega) int {
	get := e.container.LivenessProbe.HTTPGet
	g.Expect(get).NotTo(BeNil(), "the sidecar's liveness probe is an HTTP GET")
	g.Expect(get.Port.String()).To(Equal(rediscluster.MetricsPortName))
	resp, err := http.Get(e.base + get.Path) //nolint:gosec,noctx // the test's own loopback exporter
	g.Expect(err).NotTo(HaveOccurred())
	_ = resp.Body.Close()
	return resp.StatusCode
}

// runExporter runs the exporter sidecar of sts's pod as the pod would: the
// real binary with the container's arguments and the password file of the
// Secret its volume names. The test's servers listen on their own loopback
// addresses, so the pod's localhost becomes the server's address, in the
// arguments and the password file alike, and the metrics port a free one.
func runExporter(t *testing.T, g *WithT, c client.Client, sts *appsv1.StatefulSet, s *redistest.Server) *exporterProcess {
	t.Helper()
	exp, ok := container(sts.Spec.Template.Spec, rediscluster.ExporterContainerName)
	g.Expect(ok).To(BeTrue(), "the pod has the exporter sidecar")
	g.Expect(exp.VolumeMounts).To(HaveLen(1))
	e := &exporterProcess{c: c, sts: sts, s: s, container: exp, dir: t.TempDir()}
	e.project(g)
	dir := e.dir
	l, err := net.Listen("tcp", "127.0.0.1:0")
	g.Expect(err).NotTo(HaveOccurred())
	listen := l.Addr().String()
	g.Expect(l.Close()).To(Succeed())
	var args []string
	for _, a := range exp.Args {
		a = strings.ReplaceAll(a, exp.VolumeMounts[0].MountPath, dir)
		switch {
		case strings.HasPrefix(a, "--redis.addr="):
			a = strings.Replace(a, "localhost:", s.Host+":", 1)
		case strings.HasPrefix(a, "--web.listen-address="):
			a = "--web.listen-address=" + listen
		}
		args = append(args, a)
	}
	cmd := exec.Command(exporterBinary(t), args...)
	var log strings.Builder
	cmd.Stdout, cmd.Stderr = &log, &log
	g.Expect(cmd.Start()).To(Succeed())
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("redis_exporter %s:\n%s", strings.Join(args, " "), log.String())
		}
	})
	e.base = "http://" + listen
	return e
}

// scrape returns the text of one scrape of url.
func scrape(g Gomega, url string) string {
	resp, err := http.Get(url) //nolint:gosec,noctx // the test's own loopback exporter
	g.Expect(err).NotTo(HaveOccurred())
	defer func() { _ = resp.Body.Close() }()
	g.Expect(resp.StatusCode).To(Equal(http.StatusOK))
	body, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	g.Expect(err).NotTo(HaveOccurred())
	return string(body)
}

// expectScrape expects a scrape of the exporter at url to show the node up
// and in an ok cluster, with its memory and clients.
func expectScrape(g *WithT, url string) {
	g.Eventually(func(g Gomega) {
		text := scrape(g, url)
		lines := strings.Split(text, "\n")
		g.Expect(lines).To(ContainElement("redis_up 1"))
		g.Expect(lines).To(ContainElement("redis_cluster_state 1"))
		g.Expect(lines).To(ContainElement("redis_cluster_slots_assigned 16384"))
		g.Expect(lines).To(ContainElement(MatchRegexp(`^redis_memory_used_bytes [1-9]`)))
		g.Expect(lines).To(ContainElement(MatchRegexp(`^redis_connected_clients [1-9]`)))
		g.Expect(lines).To(ContainElement(MatchRegexp(`^redis_slowlog_length `)))
		g.Expect(lines).To(ContainElement(`redis_exporter_last_scrape_error{err=""} 0`))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
}

// exporterUserLog is what the node's ACL LOG holds of the exporter's user:
// the commands it was refused.
func exporterUserLog(g *WithT, admin *redis.Client) []string {
	entries, err := admin.ACLLog(context.Background(), 100).Result()
	g.Expect(err).NotTo(HaveOccurred())
	var refused []string
	for _, e := range entries {
		if e.Username == redisadmin.ExporterUser {
			refused = append(refused, e.Object)
		}
	}
	return refused
}

// TestExporterScrapesAsItsOwnUser runs the real redis_exporter beside real
// redis-server nodes that the controller set up: it scrapes as the
// exporter's ACL user, with the password file of the Secret only its
// container mounts, whose every command the node allows (ACL LOG stays
// empty) while keys, settings and flushes are refused. It does so with
// the generated password, with TLS, and with authentication off.
func TestExporterScrapesAsItsOwnUser(t *testing.T) {
	exporterBinary(t)
	for _, tc := range []struct {
		name string
		tls  bool
		open bool
	}{
		{name: "generated password"},
		{name: "tls", tls: true},
		{name: "auth disabled", open: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
			ctx := context.Background()
			b := builders.RedisCluster(ns, "scraped").Size(2)
			if tc.tls {
				ca := redistest.NewCA(t)
				cert := ca.Issue(t)
				g.Expect(c.Create(ctx, userSecret(ns, "redis-tls", map[string]string{
					"tls.crt": string(cert.Cert), "tls.key": string(cert.Key), "ca.crt": string(cert.CA)}))).To(Succeed())
				b = b.TLS("redis-tls")
			}
			if tc.open {
				b = b.AuthDisabled()
			}
			rc := b.Obj()
			g.Expect(c.Create(ctx, rc)).To(Succeed())
			k := newKubelet(t, c, ns, rc.Name)
			expectReady(g, k, rc, 2)
			for _, cause := range []string{"rollout", "redis"} {
				g.Expect(testutil.ToFloat64(rediscluster.Failovers.WithLabelValues(ns, rc.Name, cause))).To(BeZero(),
					"the failover counters exist at zero from the first reconcile")
			}

			sts := &appsv1.StatefulSet{}
			g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), sts)).To(Succeed())
			secret := &corev1.Secret{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rediscluster.ExporterSecretName(rc)}, secret)).To(Succeed())
			password := string(secret.Data[rediscluster.PasswordKey])
			g.Expect(password).To(HaveLen(40))
			acl := &corev1.Secret{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rediscluster.ACLSecretName(rc)}, acl)).To(Succeed())
			g.Expect(string(acl.Data[rediscluster.ACLKey])).To(ContainSubstring("user exporter reset on #"+redisadmin.Hash(password)),
				"a restarted node reads the exporter's user from its users file")

			for i, s := range k.servers {
				url := runExporter(t, g, c, sts, s).metrics()
				expectScrape(g, url)
				expectScrape(g, url)
				admin := s.ClientAs("", k.password(g))
				g.Expect(exporterUserLog(g, admin)).To(BeEmpty(), "node %d refused none of the exporter's commands", i)

				exp := s.ClientAs(redisadmin.ExporterUser, password)
				g.Expect(exp.Info(ctx).Err()).To(Succeed())
				for _, cmd := range [][]any{{"GET", "key"}, {"CONFIG", "SET", "maxmemory", "1"}, {"CONFIG", "GET", "masterauth"}, {"FLUSHALL"}, {"ACL", "LIST"}} {
					g.Expect(exp.Do(ctx, cmd...).Err()).To(MatchError(ContainSubstring("NOPERM")), "node %d: %v", i, cmd)
				}
				g.Expect(exporterUserLog(g, admin)).NotTo(BeEmpty(), "the refusals are logged")
			}
			expectNoSecretsIn(g, c, rc)
		})
	}
}

// TestDisabledExporterLeavesThePodsAndTheNodes: disabling the exporter
// removes the sidecar and its volume from the pods and the exporter's user
// from the users file and the running nodes.
func TestDisabledExporterLeavesThePodsAndTheNodes(t *testing.T) {
	g, c, k, rc := readyCluster(t, "quiet", 1, nil)
	ctx, ns := context.Background(), rc.Namespace
	sts := &appsv1.StatefulSet{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), sts)).To(Succeed())
	exp, ok := container(sts.Spec.Template.Spec, rediscluster.ExporterContainerName)
	g.Expect(ok).To(BeTrue(), "on by default")
	g.Expect(exp.Image).To(Equal("exporter:test"), "the manager's exporter image")
	// Only the exporter mounts its Secret.
	for _, ctr := range sts.Spec.Template.Spec.Containers {
		for _, m := range ctr.VolumeMounts {
			if m.Name == exp.VolumeMounts[0].Name {
				g.Expect(ctr.Name).To(Equal(rediscluster.ExporterContainerName))
			}
		}
	}
	admin := func() *redis.Client { return k.servers[0].ClientAs("", k.password(g)) }
	g.Expect(admin().Do(ctx, "ACL", "GETUSER", redisadmin.ExporterUser).Err()).To(Succeed())

	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
	rc.Spec.Monitoring = &cachev1.RedisClusterMonitoring{Monitoring: shared.Monitoring{Exporter: &shared.Exporter{Disabled: true}}}
	g.Expect(c.Update(ctx, rc)).To(Succeed())
	g.Eventually(func(g Gomega) {
		k.sync(g)
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), sts)).To(Succeed())
		g.Expect(sts.Spec.Template.Spec.Containers).To(HaveLen(1))
		g.Expect(sts.Spec.Template.Spec.Volumes).NotTo(ContainElement(HaveField("Name", "exporter")))
		acl := &corev1.Secret{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: rediscluster.ACLSecretName(rc)}, acl)).To(Succeed())
		g.Expect(string(acl.Data[rediscluster.ACLKey])).NotTo(ContainSubstring("user exporter"))
		for i, s := range k.servers {
			err := s.ClientAs("", k.password(g)).Do(ctx, "ACL", "GETUSER", redisadmin.ExporterUser).Err()
			g.Expect(err).To(Equal(redis.Nil), fmt.Sprintf("node %d has no exporter user", i))
		}
	}, 60*time.Second, 250*time.Millisecond).Should(Succeed())
	expectReady(g, k, rc, 1)
}

// TestExporterFollowsARotatedPassword runs the real redis_exporter against
// a real node while its password is rotated: the exporter reads its
// password file only at start and at /-/reload, so a projected new file
// alone leaves it locked out; the sidecar's liveness probe is that reload,
// so the kubelet's next probe lets it in again without restarting the pod.
// A file it cannot read fails the probe, which restarts the sidecar alone.
func TestExporterFollowsARotatedPassword(t *testing.T) {
	exporterBinary(t)
	g, c, k, rc := readyCluster(t, "rotated", 1, nil)
	deleteAtEnd(t, c, rc)
	ctx, ns := context.Background(), rc.Namespace
	sts := &appsv1.StatefulSet{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), sts)).To(Succeed())
	node := k.servers[0]
	e := runExporter(t, g, c, sts, node)
	expectScrape(g, e.metrics())
	g.Expect(e.probe(g)).To(Equal(http.StatusOK))

	secret := &corev1.Secret{}
	key := client.ObjectKey{Namespace: ns, Name: rediscluster.ExporterSecretName(rc)}
	g.Expect(c.Get(ctx, key, secret)).To(Succeed())
	old := string(secret.Data[rediscluster.PasswordKey])
	g.Expect(c.Delete(ctx, secret)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, key, secret)).To(Succeed())
		rotated := string(secret.Data[rediscluster.PasswordKey])
		g.Expect(rotated).NotTo(Equal(old))
		g.Expect(node.ClientAs(redisadmin.ExporterUser, rotated).Ping(ctx).Err()).To(Succeed(), "the node takes the new password")
		g.Expect(node.ClientAs(redisadmin.ExporterUser, old).Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS")))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())

	down := func(g Gomega) { g.Expect(strings.Split(scrape(g, e.metrics()), "\n")).To(ContainElement("redis_up 0")) }
	g.Eventually(down, 10*time.Second, 250*time.Millisecond).Should(Succeed(), "the exporter still logs in with the old password")
	e.project(g)
	g.Consistently(down, time.Second, 250*time.Millisecond).Should(Succeed(), "it does not read the projected file by itself")
	g.Expect(e.probe(g)).To(Equal(http.StatusOK))
	expectScrape(g, e.metrics())

	g.Expect(os.Remove(filepath.Join(e.dir, rediscluster.ExporterPasswordFileKey))).To(Succeed())
	g.Expect(e.probe(g)).To(Equal(http.StatusInternalServerError), "an unreadable password file fails the liveness probe")
}
