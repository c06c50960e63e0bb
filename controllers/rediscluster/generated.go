package rediscluster

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupinputs"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// Fields of the spec that name a Secret, as messages name them.
const (
	// PasswordSecretField names the clients' password Secret.
	PasswordSecretField = "spec.auth.passwordSecret"
	// TLSSecretField names the certificate's Secret.
	TLSSecretField = "spec.tls.secretName"
)

// RefuseGenerated returns an InvalidSecretError when secret, which rc
// names in field, is one the operator generated for a RedisCluster. Its
// values are not the tenant's to hand to rc's nodes: another cluster's
// passwords, or rc's own in another role (the users file would grow into
// itself). Only rc's own <name>-auth named as its password is kept, since
// it holds what rc would use anyway.
func RefuseGenerated(rc *cachev1.RedisCluster, secret *corev1.Secret, field string) error {
	owner, uid, ok := backupinputs.GeneratedFor(secret)
	if !ok {
		return nil
	}
	own := uid == string(rc.UID)
	if own && field == PasswordSecretField && secret.Name == AuthSecretName(rc) {
		return nil
	}
	whose := "RedisCluster " + owner
	if own {
		whose = "this RedisCluster (" + owner + ")"
	}
	return &InvalidSecretError{cachev1.ReasonSecretGenerated, fmt.Sprintf(
		"Secret %s belongs to %s: the operator generated it, so %s cannot name it; name a Secret you created and labelled %s=%s",
		secret.Name, whose, field, ownership.LabelWatch, ownership.WatchValue)}
}

// RecoverablePassword returns the clients' current password that acl, the
// Secret named <name>-acl, holds as masterauth, and whether it holds one.
// Only a users file rc controls counts: any other was not written from
// rc's passwords. One whose masterauth line cannot be read is an
// InvalidSecretError, since a new password would lock the clients out.
func RecoverablePassword(rc *cachev1.RedisCluster, acl *corev1.Secret) (string, bool, error) {
	if ref := metav1.GetControllerOf(acl); ref == nil || ref.UID != rc.UID {
		return "", false, nil
	}
	password, found, err := redisadmin.MasterAuth(string(acl.Data[ACLKey]))
	if err != nil {
		return "", false, &InvalidSecretError{cachev1.ReasonPasswordUnrecoverable, fmt.Sprintf(
			"Secret %s lacks the clients' password, and %s of Secret %s, which holds the one the nodes accept, cannot be read (%v): restore %s, or delete %s to have a new password generated",
			AuthSecretName(rc), ACLKey, acl.Name, err, AuthSecretName(rc), acl.Name)}
	}
	return password, found && password != "", nil
}
