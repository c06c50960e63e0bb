// Package backupinputs checks the Secrets and ConfigMaps of a backup's
// destination before a Job mounts them: a backup Job, and the restore Job
// of a RedisCluster created from that backup, hold them to the same rules.
// Each must exist, carry the label multi-operator.dev/watch=true (the
// manager's cache holds only labelled ones, so that a waiting Job is woken
// when one appears), hold its keys, and be none the operator generated: a
// tenant names only Secrets of its own, never another cluster's passwords.
//
// A missing input is a WaitingError, with a reason of apis/cache/v1 and a
// message that says what to do; the controllers show it as Ready=False and
// wait for the watch to wake them. References lists what a destination
// names, for the controllers' indexes and watches.
package backupinputs

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
	"github.com/multi-operator/multi-operator/pkg/ownership"
)

// WaitingError is an input a Job waits for.
type WaitingError struct {
	// Reason is a reason of apis/cache/v1, such as ReasonSecretNotFound.
	Reason string
	// Message says what is missing and what to do, without a secret.
	Message string
}

func (e *WaitingError) Error() string { return e.Message }

// WaitFor is a WaitingError of reason with a formatted message.
func WaitFor(reason, format string, args ...any) error {
	return &WaitingError{Reason: reason, Message: fmt.Sprintf(format, args...)}
}

// Kinds of References.
const (
	KindSecret    = "Secret"
	KindConfigMap = "ConfigMap"
)

// ReferenceKey is how References names an object of kind: "Secret/<name>"
// or "ConfigMap/<name>".
func ReferenceKey(kind, name string) string { return kind + "/" + name }

// References are the ReferenceKeys of every Secret and ConfigMap a Job of
// dest mounts: the store's credentials, its CA bundle, the encryption key.
func References(dest cachev1.BackupDestination) []string {
	var keys []string
	if s3 := dest.S3; s3 != nil {
		keys = append(keys, ReferenceKey(KindSecret, s3.CredentialsSecret))
		if ca := s3.CABundle; ca != nil && ca.SecretKeyRef != nil {
			keys = append(keys, ReferenceKey(KindSecret, ca.SecretKeyRef.Name))
		} else if ca != nil {
			keys = append(keys, ReferenceKey(KindConfigMap, ca.ConfigMapKeyRef.Name))
		}
	}
	if enc := dest.Encryption; enc != nil {
		keys = append(keys, ReferenceKey(KindSecret, enc.KeySecretRef.Name))
	}
	return keys
}

// Checker reads the inputs of a Job.
type Checker struct {
	// Cache is the manager's cache, which holds only labelled Secrets and
	// ConfigMaps.
	Cache client.Reader
	// API reads the API server, to tell a missing object from one that
	// lacks the label, by its metadata alone.
	API client.Reader
}

// Destination checks every Secret and ConfigMap of dest in namespace ns.
func (c Checker) Destination(ctx context.Context, ns string, dest cachev1.BackupDestination) error {
	if s3 := dest.S3; s3 != nil {
		if err := c.Secret(ctx, ns, s3.CredentialsSecret, backupjob.AccessKeyIDFile, backupjob.SecretAccessKeyFile); err != nil {
			return err
		}
		if ca := s3.CABundle; ca != nil && ca.SecretKeyRef != nil {
			if err := c.Secret(ctx, ns, ca.SecretKeyRef.Name, ca.SecretKeyRef.Key); err != nil {
				return err
			}
		} else if ca != nil {
			if err := c.ConfigMap(ctx, ns, ca.ConfigMapKeyRef.Name, ca.ConfigMapKeyRef.Key); err != nil {
				return err
			}
		}
	}
	if enc := dest.Encryption; enc != nil {
		return c.Secret(ctx, ns, enc.KeySecretRef.Name, enc.KeySecretRef.Key)
	}
	return nil
}

// Secret checks that the Secret name, which a tenant created and
// labelled, has keys, and is not one the operator generated: those hold
// passwords a Job must not mount.
func (c Checker) Secret(ctx context.Context, ns, name string, keys ...string) error {
	secret := &corev1.Secret{}
	if err := c.referenced(ctx, ns, name, secret, KindSecret, cachev1.ReasonSecretNotFound, cachev1.ReasonSecretNotWatched); err != nil {
		return err
	}
	if owner, _, ok := GeneratedFor(secret); ok {
		return WaitFor(cachev1.ReasonSecretGenerated, "Secret %s belongs to RedisCluster %s: the operator generated it; name a Secret you created", name, owner)
	}
	for _, k := range keys {
		if len(secret.Data[k]) == 0 {
			return WaitFor(cachev1.ReasonSecretKeyMissing, "Secret %s has no key %s", name, k)
		}
	}
	return nil
}

// ConfigMap checks that the ConfigMap name has key.
func (c Checker) ConfigMap(ctx context.Context, ns, name, key string) error {
	cm := &corev1.ConfigMap{}
	if err := c.referenced(ctx, ns, name, cm, KindConfigMap, cachev1.ReasonConfigMapNotFound, cachev1.ReasonConfigMapNotWatched); err != nil {
		return err
	}
	if cm.Data[key] == "" && len(cm.BinaryData[key]) == 0 {
		return WaitFor(cachev1.ReasonConfigMapKeyMissing, "ConfigMap %s has no key %s", name, key)
	}
	return nil
}

// referenced reads obj from the cache, which holds only labelled objects,
// and tells a missing one from an unlabelled one by its metadata alone.
func (c Checker) referenced(ctx context.Context, ns, name string, obj client.Object, kind, notFound, notWatched string) error {
	key := client.ObjectKey{Namespace: ns, Name: name}
	err := c.Cache.Get(ctx, key, obj)
	if !apierrors.IsNotFound(err) {
		return err
	}
	m := &metav1.PartialObjectMetadata{}
	m.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind(kind))
	switch err := c.API.Get(ctx, key, m); {
	case err == nil:
		return WaitFor(notWatched, "%s %s lacks the label %s=%s, without which the operator cannot see it: kubectl label %s %s %s=%s",
			kind, name, ownership.LabelWatch, ownership.WatchValue, kindArg(kind), name, ownership.LabelWatch, ownership.WatchValue)
	case apierrors.IsNotFound(err):
		return WaitFor(notFound, "%s %s does not exist in namespace %s; create it with the label %s=%s",
			kind, name, ns, ownership.LabelWatch, ownership.WatchValue)
	default:
		return err
	}
}

func kindArg(kind string) string {
	if kind == KindConfigMap {
		return "configmap"
	}
	return "secret"
}

// GeneratedFor returns the name of the RedisCluster that controls secret,
// and whether one does: the operator makes only the Secrets it generates
// with that owner reference. uid is the owner's UID.
func GeneratedFor(secret *corev1.Secret) (owner, uid string, ok bool) {
	for _, ref := range secret.OwnerReferences {
		if ref.Controller == nil || !*ref.Controller || ref.Kind != "RedisCluster" {
			continue
		}
		if gv, err := schema.ParseGroupVersion(ref.APIVersion); err == nil && gv.Group == cachev1.GroupVersion.Group {
			return ref.Name, string(ref.UID), true
		}
	}
	return "", "", false
}
