package rediscluster_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/redis/go-redis/v9"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redisadmin/redistest"
	"github.com/multi-operator/multi-operator/test/framework/builders"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// userSecret is a Secret a user makes for a RedisCluster to name, with the
// label that lets the operator see it.
func userSecret(ns, name string, data map[string]string) *corev1.Secret {
	s := &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{ownership.LabelWatch: ownership.WatchValue}},
		Data:       map[string][]byte{},
	}
	for k, v := range data {
		s.Data[k] = []byte(v)
	}
	return s
}

// expectNoSecretsIn expects no password of rc's Secrets in its
// StatefulSet, its status, or its events.
func expectNoSecretsIn(g *WithT, c client.Client, rc *cachev1.RedisCluster) {
	ctx := context.Background()
	list := &corev1.SecretList{}
	g.Expect(c.List(ctx, list, client.InNamespace(rc.Namespace))).To(Succeed())
	var secrets []string
	for _, s := range list.Items {
		for k, v := range s.Data {
			if k != rediscluster.ACLKey && len(v) >= 8 {
				secrets = append(secrets, string(v))
			}
		}
	}
	g.Expect(secrets).NotTo(BeEmpty())
	sts := &appsv1.StatefulSet{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), sts)).To(Succeed())
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
	spec, _ := json.Marshal(sts)
	status, _ := json.Marshal(rc)
	events := strings.Join(testenv.Events(g, c, rc.Namespace, rc.Name), "\n")
	for _, secret := range secrets {
		for where, text := range map[string]string{"StatefulSet": string(spec), "RedisCluster": string(status), "events": events} {
			g.Expect(text).NotTo(ContainSubstring(secret), "a secret is in the %s", where)
			g.Expect(text).NotTo(ContainSubstring(redisadmin.Hash(secret)), "a password hash is in the %s", where)
		}
	}
}

// expectAccepted expects every node to accept, or refuse, each password.
func expectAccepted(g Gomega, k *kubelet, accepted, refused []string) {
	ctx := context.Background()
	for _, s := range k.servers {
		for _, p := range accepted {
			g.Expect(s.ClientAs("", p).Ping(ctx).Err()).To(Succeed(), "%s refuses %q", s.Addr(), p)
		}
		for _, p := range refused {
			g.Expect(s.ClientAs("", p).Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS")), "%s accepts %q", s.Addr(), p)
		}
	}
}

// The passwords the rotation tests change from and to.
const oldPassword, newPassword = "the old password", "the new password"

// startWithUserPassword starts the controller and a Ready RedisCluster
// name of one master and one replica whose password is in the user's
// Secret app-redis, key password.
func startWithUserPassword(t *testing.T, name, password string) (*WithT, client.Client, *kubelet, *cachev1.RedisCluster, *corev1.Secret) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	secret := userSecret(ns, "app-redis", map[string]string{"password": password})
	g.Expect(c.Create(context.Background(), secret)).To(Succeed())
	rc := builders.RedisCluster(ns, name).Size(1).ReplicasPerMaster(1).PasswordSecret("app-redis", "password").Obj()
	g.Expect(c.Create(context.Background(), rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	expectReady(g, k, rc, 1)
	return g, c, k, rc, secret
}

func TestRotationThroughTheSecretUnderLoad(t *testing.T) {
	g, c, k, rc, secret := startWithUserPassword(t, "rotating", oldPassword)
	ns := rc.Namespace
	ctx := context.Background()
	g.Expect(rc.Status.Auth).To(Equal(&cachev1.AuthStatus{SecretName: "app-redis", SecretKey: "password"}))
	expectAccepted(g, k, []string{oldPassword}, []string{newPassword})
	generated := &corev1.Secret{}
	g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rotating-auth"}, generated))).To(BeTrue(),
		"no password is generated when the spec names one")
	clientWith := func(password string) *redis.ClusterClient {
		return redistest.ClusterClientWith(t, redis.ClusterOptions{Password: password}, k.servers[0])
	}
	load := redistest.StartLoad(clientWith(oldPassword), "rotation")

	// The user keeps the old password as the previous one, then sets the new one.
	patchSecret(g, c, secret, map[string]string{"previous": oldPassword})
	g.Expect(c.Patch(ctx, rc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"auth":{"previousPasswordKey":"previous"}}}`)))).To(Succeed())
	patchSecret(g, c, secret, map[string]string{"password": newPassword})
	g.Eventually(func(g Gomega) {
		expectAccepted(g, k, []string{oldPassword, newPassword}, nil)
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Normal PasswordRotated")))
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	g.Expect(testutil.ToFloat64(rediscluster.LastRotation.WithLabelValues(ns, rc.Name))).To(BeNumerically(">", float64(time.Now().Add(-time.Minute).Unix())))
	acl := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "rotating-acl"}, acl)).To(Succeed())
	g.Expect(string(acl.Data[rediscluster.ACLKey])).To(ContainSubstring(redisadmin.Hash(newPassword)), "a restarted pod reads the new password")

	// The clients have moved; the previous password goes.
	acked := load.ExpectNoLoss(g, clientWith(newPassword))
	g.Expect(load.Errors()).To(BeEmpty())
	g.Expect(c.Patch(ctx, rc, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"auth":{"previousPasswordKey":null}}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) { expectAccepted(g, k, []string{newPassword}, []string{oldPassword}) }, 30*time.Second, 200*time.Millisecond).Should(Succeed())
	t.Logf("%d acknowledged writes during the rotation, none lost", acked)

	// Replication survives a reconnection: the replica presents the new password.
	for _, s := range k.servers {
		s.Options.Password = newPassword
		g.Expect(s.Client().Do(ctx, "CLIENT", "KILL", "TYPE", "master").Err()).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		up := 0
		for _, s := range k.servers {
			info, err := s.Client().Info(ctx, "replication").Result()
			g.Expect(err).NotTo(HaveOccurred())
			if strings.Contains(info, "master_link_status:up") {
				up++
			}
		}
		g.Expect(up).To(Equal(1), "the replica's link is up")
	}, 30*time.Second, 200*time.Millisecond).Should(Succeed())

	// A broken Secret is reported and changes nothing on the nodes.
	broken := secret.DeepCopy()
	delete(broken.Data, "password")
	g.Expect(c.Update(ctx, broken)).To(Succeed())
	expectRejectedInput(g, c, rc, cachev1.ReasonSecretKeyMissing, "app-redis", "password")
	expectAccepted(g, k, []string{newPassword}, nil)
	patchSecret(g, c, broken, map[string]string{"password": newPassword})
	expectReady(g, k, rc, 1)
	expectNoSecretsIn(g, c, rc)
}

// expectRejectedInput waits for rc to be Ready=False with reason and a
// message naming each of names, and for a Warning event with that reason.
func expectRejectedInput(g *WithT, c client.Client, rc *cachev1.RedisCluster, reason string, names ...string) {
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		ready := conditions.Get(rc, conditions.Ready)
		g.Expect(ready).NotTo(BeNil())
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(reason))
		for _, name := range names {
			g.Expect(ready.Message).To(ContainSubstring(name))
		}
		g.Expect(testenv.Events(g, c, rc.Namespace, rc.Name)).To(ContainElement(ContainSubstring("Warning " + reason)))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

// patchSecret sets keys of secret.
func patchSecret(g *WithT, c client.Client, secret *corev1.Secret, data map[string]string) {
	g.Expect(c.Get(context.Background(), client.ObjectKeyFromObject(secret), secret)).To(Succeed())
	for k, v := range data {
		secret.Data[k] = []byte(v)
	}
	g.Expect(c.Update(context.Background(), secret)).To(Succeed())
}

func TestBadSecretsAreReportedAndNothingIsCreated(t *testing.T) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	ctx := context.Background()
	ca := redistest.NewCA(t)
	cert := ca.Issue(t)
	unlabelled := userSecret(ns, "unlabelled", map[string]string{"password": "pw"})
	unlabelled.Labels = nil
	for _, s := range []*corev1.Secret{
		unlabelled,
		userSecret(ns, "no-key", map[string]string{"other": "pw"}),
		userSecret(ns, "empty", map[string]string{"password": ""}),
		userSecret(ns, "no-ca", map[string]string{"tls.crt": string(cert.Cert), "tls.key": string(cert.Key)}),
	} {
		g.Expect(c.Create(ctx, s)).To(Succeed())
	}
	for _, tc := range []struct {
		name    string
		rc      *builders.RedisClusterWrapper
		reason  string
		message []string
	}{
		{"missing", builders.RedisCluster(ns, "missing").PasswordSecret("nope", "password"), cachev1.ReasonSecretNotFound, []string{"Secret nope does not exist"}},
		{"unlabelled", builders.RedisCluster(ns, "unlabelled").PasswordSecret("unlabelled", "password"), cachev1.ReasonSecretNotWatched, []string{"kubectl label secret unlabelled multi-operator.dev/watch=true"}},
		{"no-key", builders.RedisCluster(ns, "no-key").PasswordSecret("no-key", "password"), cachev1.ReasonSecretKeyMissing, []string{"no-key", "password"}},
		{"no-previous", builders.RedisCluster(ns, "no-previous").PasswordSecret("no-key", "other").PreviousPasswordKey("old"), cachev1.ReasonSecretKeyMissing, []string{"no-key", "old"}},
		{"empty", builders.RedisCluster(ns, "empty").PasswordSecret("empty", "password"), cachev1.ReasonPasswordEmpty, []string{"empty", "password"}},
		{"no-ca", builders.RedisCluster(ns, "no-ca").TLS("no-ca"), cachev1.ReasonTLSSecretInvalid, []string{"no-ca", "ca.crt"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			rc := tc.rc.Obj()
			g.Expect(c.Create(ctx, rc)).To(Succeed())
			expectRejectedInput(g, c, rc, tc.reason, tc.message...)
			sts := &appsv1.StatefulSet{}
			g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(rc), sts))).To(BeTrue(), "nothing is created from bad input")
		})
	}

	// Labelling the Secret is enough: its arrival in the cache brings the
	// cluster back.
	g.Expect(c.Patch(ctx, unlabelled, client.RawPatch(types.MergePatchType, []byte(`{"metadata":{"labels":{"multi-operator.dev/watch":"true"}}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		sts := &appsv1.StatefulSet{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "unlabelled"}, sts)).To(Succeed())
	}, 20*time.Second, 100*time.Millisecond).Should(Succeed())
}

func TestAuthDisabledIsReported(t *testing.T) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	ctx := context.Background()
	rc := builders.RedisCluster(ns, "open").Size(1).AuthDisabled().Obj()
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	expectReady(g, k, rc, 1)
	auth := conditions.Get(rc, cachev1.ConditionAuthEnabled)
	g.Expect(auth).NotTo(BeNil())
	g.Expect(auth.Status).To(Equal(metav1.ConditionFalse))
	g.Expect(auth.Reason).To(Equal(cachev1.ReasonAuthDisabled))
	g.Expect(rc.Status.Auth).To(BeNil())
	g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Warning AuthDisabled")))
	g.Expect(k.servers[0].ClientAs("", "").Ping(ctx).Err()).To(Succeed())
	// The operator still works as its own user.
	g.Expect(k.servers[0].ClientAs("", "").Do(ctx, "ACL", "GETUSER", redisadmin.OperatorUser).Val()).NotTo(BeNil())
}

func TestTLSClusterReloadsARenewedCertificate(t *testing.T) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	ctx := context.Background()
	ca := redistest.NewCA(t)
	first := ca.Issue(t)
	secret := userSecret(ns, "redis-tls", map[string]string{"tls.crt": string(first.Cert), "tls.key": string(first.Key), "ca.crt": string(first.CA)})
	g.Expect(c.Create(ctx, secret)).To(Succeed())
	rc := builders.RedisCluster(ns, "secure").Size(2).TLS("redis-tls").Obj()
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	expectReady(g, k, rc, 2)
	data := k.cluster(t)
	redistest.WriteKeys(g, data)

	// Plain text is refused.
	plain := redis.NewClient(&redis.Options{Addr: k.servers[0].Addr(), MaxRetries: -1, Protocol: 2, DisableIdentity: true})
	defer func() { _ = plain.Close() }()
	g.Expect(plain.Ping(ctx).Err()).To(HaveOccurred())

	// cert-manager renews the certificate; the kubelet projects it later.
	pids := map[int32]int{}
	for i, s := range k.servers {
		pids[i] = s.PID()
	}
	renewed := ca.Issue(t)
	patchSecret(g, c, secret, map[string]string{"tls.crt": string(renewed.Cert), "tls.key": string(renewed.Key)})
	time.Sleep(time.Second)
	for _, s := range k.servers {
		g.Expect(renewed.WriteFiles(s.TLSDir())).To(Succeed())
	}
	g.Eventually(func(g Gomega) {
		for _, s := range k.servers {
			g.Expect(s.ServedCertificate()).To(Equal(renewed.Cert), s.Addr())
		}
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Normal CertificateReloaded")))
	}, 45*time.Second, 500*time.Millisecond).Should(Succeed())
	for i, s := range k.servers {
		g.Expect(s.PID()).To(Equal(pids[i]), "no node restarted")
	}
	redistest.ExpectKeys(g, data)
	expectReady(g, k, rc, 2)
}

// TestPasswordsARivalStoredFirstAreKept plays a second manager that made
// the cluster's passwords a moment before this one, as one does beside a
// leader that has not stepped down yet: its create of each generated
// Secret reaches the API server just ahead of ours. Ours is refused, and
// the rival's passwords are the ones kept, in the Secrets and in the
// nodes' users file. Replacing them locked the operator out, for good, of
// nodes that had started with them (WRONGPASS, seen on the real node).
func TestPasswordsARivalStoredFirstAreKept(t *testing.T) {
	env := testenv.Get(t)
	ctx := context.Background()
	var mu sync.Mutex
	rival := map[string]string{} // Secret name: the rival's password
	cfg := env.BeforeEachCreate(func(obj client.Object) {
		_, isSecret := obj.(*corev1.Secret)
		ns, name := obj.GetNamespace(), obj.GetName()
		owner, generated := strings.CutSuffix(name, "-operator")
		if !generated {
			owner, generated = strings.CutSuffix(name, "-auth")
		}
		if !isSecret || !generated {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if _, done := rival[name]; done {
			return
		}
		rc := &cachev1.RedisCluster{}
		if err := env.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: owner}, rc); err != nil {
			t.Errorf("reading the owner of Secret %s: %v", name, err)
			return
		}
		password := "the rival's password for " + name
		secret := rediscluster.DesiredPasswordSecret(rc, name, password, nil)
		if err := controllerutil.SetControllerReference(rc, secret, env.Scheme); err != nil {
			t.Errorf("owning Secret %s: %v", name, err)
			return
		}
		if err := env.Client.Create(ctx, secret); err != nil {
			t.Errorf("the rival's create of Secret %s: %v", name, err)
			return
		}
		rival[name] = password
	})
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{Config: cfg})
	rc := builders.RedisCluster(ns, "raced").Size(1).Obj()
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	// The nodes start with the users file; the operator logs in to them.
	expectReady(g, k, rc, 1)

	mu.Lock()
	defer mu.Unlock()
	g.Expect(rival).To(HaveKey("raced-operator"), "the rival created the operator's password first")
	g.Expect(rival).To(HaveKey("raced-auth"), "the rival created the clients' password first")
	acl := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "raced-acl"}, acl)).To(Succeed())
	for name, password := range rival {
		secret := &corev1.Secret{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, secret)).To(Succeed())
		g.Expect(string(secret.Data[rediscluster.PasswordKey])).To(Equal(password), "Secret %s keeps the password stored first", name)
		g.Expect(string(acl.Data[rediscluster.ACLKey])).To(ContainSubstring(redisadmin.Hash(password)), "the users file holds the kept password of %s", name)
		g.Expect(testenv.Events(g, c, ns, rc.Name)).NotTo(ContainElement(ContainSubstring("Updated Secret " + name)))
	}
	expectAccepted(g, k, []string{rival["raced-auth"]}, nil)
}

// TestGeneratedSecretsAreRefused plays a tenant who may edit RedisClusters
// but not read Secrets, and names the Secrets the operator generated for
// cluster a in cluster b: b is refused, and b's users file, which b's
// own image reads, never gets a's passwords.
func TestGeneratedSecretsAreRefused(t *testing.T) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	ctx := context.Background()
	a := builders.RedisCluster(ns, "a").Size(1).Obj()
	g.Expect(c.Create(ctx, a)).To(Succeed())
	var aSecrets []string
	g.Eventually(func(g Gomega) {
		aSecrets = nil
		for _, name := range []string{"a-auth", "a-operator", "a-acl"} {
			s := &corev1.Secret{}
			g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, s)).To(Succeed())
			if p := string(s.Data[rediscluster.PasswordKey]); p != "" {
				aSecrets = append(aSecrets, p, redisadmin.Hash(p), redisadmin.Quote(p))
			}
		}
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(aSecrets).To(HaveLen(6))

	bPassword := "b's own password"
	g.Expect(c.Create(ctx, userSecret(ns, "b-password", map[string]string{"password": bPassword}))).To(Succeed())
	b := builders.RedisCluster(ns, "b").Size(1).PasswordSecret("b-password", "password").Obj()
	g.Expect(c.Create(ctx, b)).To(Succeed())
	bUsers := func(g Gomega) string {
		acl := &corev1.Secret{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "b-acl"}, acl)).To(Succeed())
		return string(acl.Data[rediscluster.ACLKey])
	}
	g.Eventually(bUsers, 30*time.Second, 100*time.Millisecond).Should(ContainSubstring(redisadmin.Hash(bPassword)))

	for _, name := range []string{"a-auth", "a-operator"} {
		patch := fmt.Sprintf(`{"spec":{"auth":{"passwordSecret":{"name":%q,"key":"password"}}}}`, name)
		g.Expect(c.Patch(ctx, b, client.RawPatch(types.MergePatchType, []byte(patch)))).To(Succeed())
		expectRejectedInput(g, c, b, cachev1.ReasonSecretGenerated,
			"Secret "+name+" belongs to RedisCluster a", "spec.auth.passwordSecret", "name a Secret you created")
		g.Consistently(func(g Gomega) {
			users := bUsers(g)
			g.Expect(users).To(ContainSubstring(redisadmin.Hash(bPassword)), "b's users file is left as it was")
			for _, secret := range aSecrets {
				g.Expect(users).NotTo(ContainSubstring(secret), "b's users file holds a password of a's")
			}
		}, 2*time.Second, 100*time.Millisecond).Should(Succeed())
	}
	expectNoSecretsIn(g, c, b)

	// A new cluster that names a's users file as its certificate gets nothing.
	tlsFromACL := builders.RedisCluster(ns, "c").TLS("a-acl").Obj()
	g.Expect(c.Create(ctx, tlsFromACL)).To(Succeed())
	expectRejectedInput(g, c, tlsFromACL, cachev1.ReasonSecretGenerated, "Secret a-acl belongs to RedisCluster a", "spec.tls.secretName")
	g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "c-acl"}, &corev1.Secret{}))).To(BeTrue())
	g.Expect(apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(tlsFromACL), &appsv1.StatefulSet{}))).To(BeTrue())

	// Naming a Secret of its own again brings b back.
	g.Expect(c.Patch(ctx, b, client.RawPatch(types.MergePatchType, []byte(`{"spec":{"auth":{"passwordSecret":{"name":"b-password"}}}}`)))).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(b), b)).To(Succeed())
		g.Expect(conditions.Get(b, conditions.Ready).Reason).NotTo(Equal(cachev1.ReasonSecretGenerated))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
}

// TestDeletedAuthSecretIsRecovered deletes the generated <name>-auth of a
// running cluster: it comes back with the password the nodes accept, so
// that clients keep working, and a new random password never replaces it.
func TestDeletedAuthSecretIsRecovered(t *testing.T) {
	g, c, ns := testenv.StartController(t, rediscluster.Descriptor(), options, testenv.ManagerOptions{})
	ctx := context.Background()
	rc := builders.RedisCluster(ns, "kept").Size(1).Obj()
	g.Expect(c.Create(ctx, rc)).To(Succeed())
	k := newKubelet(t, c, ns, rc.Name)
	expectReady(g, k, rc, 1)
	auth := &corev1.Secret{}
	key := client.ObjectKey{Namespace: ns, Name: "kept-auth"}
	g.Expect(c.Get(ctx, key, auth)).To(Succeed())
	password := string(auth.Data[rediscluster.PasswordKey])
	data := redistest.ClusterClientWith(t, redis.ClusterOptions{Password: password}, k.servers[0])
	g.Expect(data.Set(ctx, "before", "1", 0).Err()).To(Succeed())

	recovered := func(g Gomega, previous types.UID) {
		restored := &corev1.Secret{}
		g.Expect(c.Get(ctx, key, restored)).To(Succeed())
		g.Expect(restored.UID).NotTo(Equal(previous))
		g.Expect(string(restored.Data[rediscluster.PasswordKey])).To(Equal(password))
		g.Expect(metav1.IsControlledBy(restored, rc)).To(BeTrue())
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Normal " + cachev1.ReasonPasswordRecovered + ": Secret kept-auth")))
	}
	g.Expect(c.Delete(ctx, auth)).To(Succeed())
	g.Eventually(func(g Gomega) { recovered(g, auth.UID) }, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	expectAccepted(g, k, []string{password}, nil)
	g.Expect(data.Set(ctx, "after", "1", 0).Err()).To(Succeed(), "a client with the old password still works")

	// A Secret that only lost its password gets the same one back.
	g.Expect(c.Get(ctx, key, auth)).To(Succeed())
	delete(auth.Data, rediscluster.PasswordKey)
	g.Expect(c.Update(ctx, auth)).To(Succeed())
	g.Eventually(func(g Gomega) {
		restored := &corev1.Secret{}
		g.Expect(c.Get(ctx, key, restored)).To(Succeed())
		g.Expect(string(restored.Data[rediscluster.PasswordKey])).To(Equal(password))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	expectReady(g, k, rc, 1)
	expectAccepted(g, k, []string{password}, nil)
	g.Expect(data.Get(ctx, "before").Val()).To(Equal("1"))
	expectNoSecretsIn(g, c, rc)
}

// A password replaced in place, without keeping the old one as the
// previous, still reaches every node: the operator logs in as the default
// user with the password the nodes last enforced, which it keeps in
// <name>-operator. A deleted <name>-operator gets a new password, which
// the nodes take from the default user; the operator's user never gains
// the right to change users.
func TestPasswordReplacedInPlaceAndLostOperatorSecret(t *testing.T) {
	g, c, k, rc, secret := startWithUserPassword(t, "inplace", oldPassword)
	ns := rc.Namespace
	ctx := context.Background()
	operatorKey := client.ObjectKey{Namespace: ns, Name: rediscluster.OperatorSecretName(rc)}
	g.Eventually(func(g Gomega) {
		operator := &corev1.Secret{}
		g.Expect(c.Get(ctx, operatorKey, operator)).To(Succeed())
		g.Expect(rediscluster.KnownPasswords(operator)).To(Equal([]string{oldPassword}))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())

	patchSecret(g, c, secret, map[string]string{"password": newPassword})
	g.Eventually(func(g Gomega) { expectAccepted(g, k, []string{newPassword}, []string{oldPassword}) }, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Eventually(func(g Gomega) {
		operator := &corev1.Secret{}
		g.Expect(c.Get(ctx, operatorKey, operator)).To(Succeed())
		g.Expect(rediscluster.KnownPasswords(operator)).To(Equal([]string{newPassword}))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	// The test's own clients of the nodes log in with the new password.
	for _, s := range k.servers {
		s.Options.Password = newPassword
	}
	expectReady(g, k, rc, 1)

	operator := &corev1.Secret{}
	g.Expect(c.Get(ctx, operatorKey, operator)).To(Succeed())
	lost := string(operator.Data[rediscluster.PasswordKey])
	g.Expect(c.Delete(ctx, operator)).To(Succeed())
	g.Eventually(func(g Gomega) {
		g.Expect(testenv.Events(g, c, ns, rc.Name)).To(ContainElement(ContainSubstring("Normal " + string(redisadmin.ReasonOperatorUserReset))))
	}, 30*time.Second, 100*time.Millisecond).Should(Succeed())
	g.Expect(c.Get(ctx, operatorKey, operator)).To(Succeed())
	made := string(operator.Data[rediscluster.PasswordKey])
	g.Expect(made).NotTo(Equal(lost))
	for _, s := range k.servers {
		g.Expect(s.ClientAs(redisadmin.OperatorUser, lost).Ping(ctx).Err()).To(MatchError(ContainSubstring("WRONGPASS")))
		op := s.ClientAs(redisadmin.OperatorUser, made)
		g.Expect(op.Ping(ctx).Err()).To(Succeed())
		g.Expect(op.Do(ctx, "ACL", "SETUSER", redisadmin.OperatorUser, "+@all").Err()).To(MatchError(ContainSubstring("NOPERM")))
	}
	expectReady(g, k, rc, 1)
	expectNoSecretsIn(g, c, rc)
}

// TestRefusedPasswordsAreCounted changes a node's password behind the
// operator's back: the node refuses every password the operator knows, so
// it cannot make that node enforce the spec's, and
// rediscluster_password_rotation_failures_total counts it as refused.
func TestRefusedPasswordsAreCounted(t *testing.T) {
	g, c, k, rc := readyCluster(t, "locked", 1, nil)
	deleteAtEnd(t, c, rc)
	ctx, ns := context.Background(), rc.Namespace
	failures := func(reason string) float64 {
		return testutil.ToFloat64(rediscluster.RotationFailures.WithLabelValues(ns, rc.Name, reason))
	}
	g.Expect(failures("refused")).To(BeZero())
	g.Expect(k.servers[0].ClientAs("", k.password(g)).Do(ctx, "ACL", "SETUSER", "default", "resetpass", ">behind-the-back").Err()).To(Succeed())
	pokePod(g, c, ns, "locked-0", "1")
	g.Eventually(func(g Gomega) {
		g.Expect(failures("refused")).To(BeNumerically(">=", 1))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())
	g.Expect(failures("error")).To(BeZero(), "no command failed")

	// Clients with the spec's password are refused on that node: the
	// cluster is not Ready, and one Warning says why.
	refusedWarnings := func(g Gomega) []string {
		return testenv.Warnings(g, c, ns, rc.Name, cachev1.ReasonPasswordsRefused)
	}
	g.Eventually(func(g Gomega) {
		g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), rc)).To(Succeed())
		ready := conditions.Get(rc, conditions.Ready)
		g.Expect(ready.Status).To(Equal(metav1.ConditionFalse))
		g.Expect(ready.Reason).To(Equal(cachev1.ReasonPasswordsRefused))
		g.Expect(ready.Message).To(HavePrefix("locked-0 refuse every password"))
		g.Expect(conditions.Get(rc, cachev1.ConditionDegraded).Reason).To(Equal(cachev1.ReasonPasswordsRefused))
		g.Expect(refusedWarnings(g)).To(HaveLen(1))
	}, 30*time.Second, 250*time.Millisecond).Should(Succeed())

	// Given its password back, the node serves clients again: Ready.
	g.Expect(k.servers[0].ClientAs("", "behind-the-back").Do(ctx, "ACL", "SETUSER", "default", "resetpass", ">"+k.password(g)).Err()).To(Succeed())
	pokePod(g, c, ns, "locked-0", "2")
	expectReady(g, k, rc, 1)
	g.Expect(refusedWarnings(g)).To(HaveLen(1))
}
