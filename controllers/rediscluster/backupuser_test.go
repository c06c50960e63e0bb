package rediscluster_test

import (
	"bytes"
	"context"
	"testing"

	. "github.com/onsi/gomega"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/controllers/rediscluster"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
	"github.com/multi-operator/multi-operator/pkg/redissnapshot"
)

// Every cluster gets the backups' user, with a generated password in
// <name>-backup that no node's pod mounts: the user may take a snapshot
// and read no key.
func TestEveryClusterHasTheBackupUser(t *testing.T) {
	g, c, k, rc := readyCluster(t, "backed", 1, nil)
	ctx := context.Background()
	secret := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: rediscluster.BackupSecretName(rc)}, secret)).To(Succeed())
	password := string(secret.Data[rediscluster.PasswordKey])
	g.Expect(password).To(HaveLen(40))
	acl := &corev1.Secret{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: rediscluster.ACLSecretName(rc)}, acl)).To(Succeed())
	g.Expect(string(acl.Data[rediscluster.ACLKey])).To(ContainSubstring("user backup reset on #"+redisadmin.Hash(password)),
		"a restarted node reads the backups' user from its users file")

	sts := &appsv1.StatefulSet{}
	g.Expect(c.Get(ctx, client.ObjectKeyFromObject(rc), sts)).To(Succeed())
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			g.Expect(v.Secret.SecretName).NotTo(Equal(secret.Name), "no node mounts the backups' password")
		}
	}
	for _, s := range k.servers {
		user := s.ClientAs(redisadmin.BackupUser, password)
		g.Expect(user.Do(ctx, "GET", "key").Err()).To(MatchError(ContainSubstring("NOPERM")))
		var rdb bytes.Buffer
		_, err := redissnapshot.Take(ctx, s.Addr(), &rdb, redissnapshot.Options{Username: redisadmin.BackupUser, Password: password})
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(rdb.String()).To(HavePrefix("REDIS"))
	}
	expectNoSecretsIn(g, c, rc)
}
