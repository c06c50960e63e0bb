package rediscluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/apply"
	"github.com/multi-operator/multi-operator/pkg/conditions"
	"github.com/multi-operator/multi-operator/pkg/events"
	"github.com/multi-operator/multi-operator/pkg/ownership"
	"github.com/multi-operator/multi-operator/pkg/reconciler"
	"github.com/multi-operator/multi-operator/pkg/redisadmin"
)

// certificateRetry is how soon a node that still serves an old
// certificate is reloaded again: the kubelet renews mounted Secrets within
// about a minute.
const certificateRetry = 10 * time.Second

// +kubebuilder:rbac:groups="",resources=secrets,verbs=get;list;watch;create;patch

// reconcileSecrets reads the Secrets the cluster references, makes the
// ones it generates (the clients' password unless spec names one, the
// operator's password, the exporter's, the backups' and, while the cluster
// restores, the restore's passwords, and the nodes' users file) and works
// out the access
// the nodes must enforce. Bad input stops the reconcile before anything
// is changed: Ready=False names the Secret and key, with a Warning event.
func (r *Reconciler) reconcileSecrets(ctx context.Context, s *scope) (reconciler.Result, error) {
	rc := s.rc
	initMetrics(rc.Namespace, rc.Name)
	rc.Status.Selector = labels.SelectorFromSet(ownership.SelectorLabels(appName, rc.Name)).String()
	err := r.readAccess(ctx, s)
	var invalid *InvalidSecretError
	if errors.As(err, &invalid) {
		if conditions.MarkFalse(rc, conditions.Ready, invalid.Reason, invalid.Message) {
			r.events.Warning(rc, invalid.Reason, events.ActionReconcile, "%s; the cluster is left as it is", invalid.Message)
		}
		conditions.MarkFalse(rc, cachev1.ConditionProgressing, invalid.Reason, "waiting for the Secret to be fixed")
		// The Secret's own events bring the cluster back.
		return reconciler.Result{Stop: true}, nil
	}
	if err != nil {
		return reconciler.StopOnApplyError(r.events, rc, err)
	}
	if authEnabled(rc) {
		conditions.MarkTrue(rc, cachev1.ConditionAuthEnabled, cachev1.ReasonPasswordRequired, "clients authenticate with the password in Secret "+rc.Status.Auth.SecretName)
	} else if conditions.MarkFalse(rc, cachev1.ConditionAuthEnabled, cachev1.ReasonAuthDisabled, "spec.auth.disabled is true: any client that reaches a node may run any command") {
		r.events.Warning(rc, cachev1.ReasonAuthDisabled, events.ActionReconcile, "Authentication is off (spec.auth.disabled): any client that reaches a node may run any command")
	}
	return reconciler.Result{}, r.applySecret(ctx, rc, DesiredACLSecret(rc, s.access))
}

// markBusIsolation sets BusIsolated, with how to get isolation when the
// bus lacks it.
func markBusIsolation(rc *cachev1.RedisCluster, busTLS bool) {
	switch {
	case busTLS:
		conditions.MarkTrue(rc, cachev1.ConditionBusIsolated, cachev1.ReasonBusCertificate, fmt.Sprintf(
			"the cluster bus and replication accept only nodes with the certificate of Secret %s", BusSecretName(rc)))
	case rc.Spec.TLS != nil:
		conditions.MarkFalse(rc, cachev1.ConditionBusIsolated, cachev1.ReasonBusTrustsUserCA, fmt.Sprintf(
			"the cluster bus accepts any certificate that ca.crt of Secret %s trusts, and NetworkPolicy %s admits only this cluster's pods where the network enforces it; for isolation on any network, sign this cluster's certificate with a CA that signs no other",
			rc.Spec.TLS.SecretName, rc.Name))
	default:
		conditions.MarkFalse(rc, cachev1.ConditionBusIsolated, cachev1.ReasonBusPlainSinceCreation, fmt.Sprintf(
			"the cluster bus speaks plain text since the cluster was created, and only NetworkPolicy %s, where the network enforces it, keeps other pods off it; for isolation on any network, create a new RedisCluster and move the data to it",
			rc.Name))
	}
}

// readAccess fills s.access and s.tls from the Secrets, generating the
// passwords that do not exist yet, and, when the bus is to speak TLS,
// the bus certificate.
func (r *Reconciler) readAccess(ctx context.Context, s *scope) error {
	rc := s.rc
	sts := &appsv1.StatefulSet{}
	switch err := r.client.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: rc.Name}, sts); {
	case err == nil:
		s.statefulSet = sts
	case !apierrors.IsNotFound(err):
		return err
	}
	s.busTLS = BusTLS(rc, s.statefulSet)
	markBusIsolation(rc, s.busTLS)
	operator, err := r.generatedPassword(ctx, rc, OperatorSecretName(rc))
	if err != nil {
		return err
	}
	if s.busTLS {
		if operator, err = r.generatedBusSecret(ctx, s, operator); err != nil {
			return err
		}
	}
	s.access = redisadmin.Access{OperatorPassword: string(operator.Data[PasswordKey]), KnownPasswords: KnownPasswords(operator)}
	s.operatorSecret = operator
	if ExporterEnabled(rc) {
		// A disabled exporter's Secret is kept, for when it is enabled
		// again; the nodes drop its user.
		exporter, err := r.generatedPassword(ctx, rc, ExporterSecretName(rc))
		if err != nil {
			return err
		}
		s.access.ExporterPassword = string(exporter.Data[PasswordKey])
	}
	if err := r.readCanaryPassword(ctx, s); err != nil {
		return err
	}
	// Every cluster has the backup user, whether or not a backup was asked
	// for yet: a RedisClusterBackup then needs nothing from this
	// controller, and the user can only take snapshots, which the clients'
	// password allows too.
	backup, err := r.generatedPassword(ctx, rc, BackupSecretName(rc))
	if err != nil {
		return err
	}
	s.access.BackupPassword = string(backup.Data[PasswordKey])
	if err := r.readRestorePassword(ctx, s); err != nil {
		return err
	}
	rc.Status.Auth = nil
	if ref, ok := PasswordRef(rc); ok {
		var secret *corev1.Secret
		if rc.Spec.Auth == nil || rc.Spec.Auth.PasswordSecret == nil {
			// The generated Secret, as written: the cache may not have it yet.
			if secret, err = r.generatedPassword(ctx, rc, ref.Name); err != nil {
				return err
			}
		} else {
			secret = &corev1.Secret{}
			if err := r.referencedSecret(ctx, rc, ref.Name, PasswordSecretField, secret); err != nil {
				return err
			}
		}
		previous := ""
		if rc.Spec.Auth != nil {
			previous = rc.Spec.Auth.PreviousPasswordKey
		}
		if s.access.Passwords, err = ClientPasswords(secret, ref, previous); err != nil {
			return err
		}
		rc.Status.Auth = &cachev1.AuthStatus{SecretName: ref.Name, SecretKey: ref.Key}
	}
	if rc.Spec.TLS != nil {
		secret := &corev1.Secret{}
		if err := r.referencedSecret(ctx, rc, rc.Spec.TLS.SecretName, TLSSecretField, secret); err != nil {
			return err
		}
		material, err := ParseTLSSecret(secret)
		if err != nil {
			return err
		}
		s.tls = &material
		s.access.Certificate = material.Certificate
	}
	return nil
}

// referencedSecret reads a Secret rc names in field from the cache. One
// the cache does not hold is missing, or lacks the watch label; one the
// operator generated for a RedisCluster is refused (RefuseGenerated).
func (r *Reconciler) referencedSecret(ctx context.Context, rc *cachev1.RedisCluster, name, field string, secret *corev1.Secret) error {
	key := client.ObjectKey{Namespace: rc.Namespace, Name: name}
	err := r.client.Get(ctx, key, secret)
	if err == nil {
		return RefuseGenerated(rc, secret, field)
	}
	if !apierrors.IsNotFound(err) {
		return err
	}
	// The API server tells a missing Secret from one the cache ignores.
	// Only its metadata is read.
	meta := &metav1.PartialObjectMetadata{}
	meta.SetGroupVersionKind(corev1.SchemeGroupVersion.WithKind("Secret"))
	switch liveErr := r.reader.Get(ctx, key, meta); {
	case liveErr == nil:
		return &InvalidSecretError{cachev1.ReasonSecretNotWatched, fmt.Sprintf(
			"Secret %s lacks the label %s=%s, without which the operator cannot see it or its changes: kubectl label secret %s %s=%s",
			name, ownership.LabelWatch, ownership.WatchValue, name, ownership.LabelWatch, ownership.WatchValue)}
	case apierrors.IsNotFound(liveErr):
		return &InvalidSecretError{cachev1.ReasonSecretNotFound, fmt.Sprintf("Secret %s does not exist", name)}
	default:
		return liveErr
	}
}

// generatedPassword returns the generated Secret name, as the API server
// has it, creating it, or its password, with a new random password when it
// is missing. A password that exists is never replaced, not even one that
// another writer stored a moment ago, such as a second manager beside a
// leader that has not yet stepped down: the nodes may already enforce it,
// and the operator could not log in to them again. So a new password is
// only created, or added to the very version of the Secret that lacked it;
// a write refused because the Secret was made or changed meanwhile reads
// it again and keeps what it holds.
func (r *Reconciler) generatedPassword(ctx context.Context, rc *cachev1.RedisCluster, name string) (*corev1.Secret, error) {
	key := client.ObjectKey{Namespace: rc.Namespace, Name: name}
	for attempt := 0; ; attempt++ {
		existing := &corev1.Secret{}
		var err error
		if attempt == 0 {
			err = r.client.Get(ctx, key, existing)
		}
		// A retry reads the API server only: the cache may lag behind the
		// write that refused ours.
		if attempt > 0 || apierrors.IsNotFound(err) {
			// Only the API server may say that no password exists: one made a
			// moment ago may not be in the cache yet, and must not be replaced.
			existing = &corev1.Secret{}
			err = r.reader.Get(ctx, key, existing)
		}
		if client.IgnoreNotFound(err) != nil {
			return nil, err
		}
		if password := string(existing.Data[PasswordKey]); password != "" {
			desired := DesiredPasswordSecret(rc, name, password, existing.Data)
			return desired, r.applySecret(ctx, rc, desired)
		}
		found := err == nil
		desired, err := r.storeNewPassword(ctx, rc, name, existing, found)
		if attempt < 2 && (apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err)) {
			continue
		}
		return desired, err
	}
}

// storeNewPassword writes a password to the Secret name: the one the
// nodes still accept when it is the clients' (initialPassword), a new
// random one otherwise. It creates the Secret, or, when existing was found
// without the password, adds it to that version only, so that either
// write fails rather than replace a password stored since.
func (r *Reconciler) storeNewPassword(ctx context.Context, rc *cachev1.RedisCluster, name string, existing *corev1.Secret, found bool) (*corev1.Secret, error) {
	password, recovered, err := r.initialPassword(ctx, rc, name)
	if err != nil {
		return nil, err
	}
	desired := DesiredPasswordSecret(rc, name, password, existing.Data)
	if ref := metav1.GetControllerOf(existing); found && (ref == nil || ref.UID != rc.UID) {
		// Not ours: apply reports whose it is and changes nothing.
		return nil, r.applySecret(ctx, rc, desired)
	}
	result, err := r.writePassword(ctx, rc, desired, existing, found)
	if err != nil {
		return nil, err
	}
	r.reportSecret(rc, result, name)
	if recovered {
		action := events.ActionCreate
		if result == apply.Updated {
			action = events.ActionUpdate
		}
		r.events.Normal(rc, cachev1.ReasonPasswordRecovered, action,
			"Secret %s lacked the clients' password: stored again the one the nodes accept, from %s, so that clients keep working", name, ACLSecretName(rc))
	}
	return desired, nil
}

// writePassword creates desired, or, when existing was found, adds
// desired's password to that very version.
func (r *Reconciler) writePassword(ctx context.Context, rc *cachev1.RedisCluster, desired, existing *corev1.Secret, found bool) (apply.Result, error) {
	if !found {
		if err := controllerutil.SetControllerReference(rc, desired, r.client.Scheme()); err != nil {
			return apply.Unchanged, err
		}
		if err := r.client.Create(ctx, desired); err != nil {
			return apply.Unchanged, fmt.Errorf("creating Secret %s: %w", desired.Name, err)
		}
		return apply.Created, nil
	}
	updated := existing.DeepCopy()
	if updated.Data == nil {
		updated.Data = map[string][]byte{}
	}
	updated.Data[PasswordKey] = desired.Data[PasswordKey]
	if err := r.client.Patch(ctx, updated, client.MergeFromWithOptions(existing, client.MergeFromWithOptimisticLock{})); err != nil {
		return apply.Unchanged, fmt.Errorf("updating Secret %s: %w", desired.Name, err)
	}
	// Its labels, if they need it, are corrected by the reconcile its
	// change brings.
	return apply.Updated, nil
}

// initialPassword is the password a generated Secret gets when it lacks
// one. For the clients' <name>-auth it is the masterauth of <name>-acl
// when rc controls that Secret: the nodes accept it, and a new password
// would lock every client out. Only a cluster without one gets a new
// random password. recovered says which.
func (r *Reconciler) initialPassword(ctx context.Context, rc *cachev1.RedisCluster, name string) (password string, recovered bool, err error) {
	if name == AuthSecretName(rc) {
		// The API server's: a users file written a moment ago counts.
		acl := &corev1.Secret{}
		err := r.reader.Get(ctx, client.ObjectKey{Namespace: rc.Namespace, Name: ACLSecretName(rc)}, acl)
		if client.IgnoreNotFound(err) != nil {
			return "", false, err
		}
		if password, found, err := RecoverablePassword(rc, acl); err != nil || found {
			return password, found, err
		}
	}
	password, err = GeneratePassword()
	return password, false, err
}

// generatedBusSecret makes <name>-bus when it does not exist, from the
// copy operator (<name>-operator) keeps when there is one, and keeps that
// copy up to date. It returns operator as it now is. A <name>-bus that
// exists is never replaced: nodes that started with its CA would not
// accept another.
func (r *Reconciler) generatedBusSecret(ctx context.Context, s *scope, operator *corev1.Secret) (*corev1.Secret, error) {
	rc := s.rc
	key := client.ObjectKey{Namespace: rc.Namespace, Name: BusSecretName(rc)}
	existing := &corev1.Secret{}
	err := r.client.Get(ctx, key, existing)
	if apierrors.IsNotFound(err) {
		// Only the API server may say that none exists: one made a moment
		// ago may not be in the cache yet.
		err = r.reader.Get(ctx, key, existing)
	}
	if client.IgnoreNotFound(err) != nil {
		return nil, err
	}
	var bus map[string][]byte
	if err == nil {
		ref := metav1.GetControllerOf(existing)
		ours := ref != nil && ref.UID == rc.UID
		if ours {
			if _, err := ParseTLSSecret(existing); err != nil {
				return nil, err
			}
		}
		// Corrects our labels; of a Secret not ours, apply reports whose
		// it is and changes nothing.
		if err := r.applySecret(ctx, rc, desiredSecret(rc, key.Name, existing.Data)); err != nil {
			return nil, err
		}
		if !ours {
			return operator, nil
		}
		bus = existing.Data
	} else if bus, err = r.createBusSecret(ctx, s, operator); err != nil {
		return nil, err
	}
	if kept, ok := BusCopy(operator); ok && maps.EqualFunc(kept, bus, bytes.Equal) {
		return operator, nil
	}
	// Bookkeeping, not a change a user would look for: no event.
	withCopy := WithBusCopy(operator, bus)
	if _, err := r.secrets.Apply(ctx, r.client, rc, withCopy); err != nil {
		return nil, err
	}
	return withCopy, nil
}

// createBusSecret creates <name>-bus from the copy in operator when it
// holds a valid one, from a new CA otherwise, and returns its data.
func (r *Reconciler) createBusSecret(ctx context.Context, s *scope, operator *corev1.Secret) (map[string][]byte, error) {
	rc := s.rc
	kept, recovered := BusCopy(operator)
	var desired *corev1.Secret
	if recovered {
		desired = desiredSecret(rc, BusSecretName(rc), kept)
		if _, err := ParseTLSSecret(desired); err != nil {
			recovered = false
		}
	}
	if !recovered {
		var err error
		if desired, err = DesiredBusSecret(rc, r.clock.Now()); err != nil {
			return nil, err
		}
	}
	if err := controllerutil.SetControllerReference(rc, desired, r.client.Scheme()); err != nil {
		return nil, err
	}
	if err := r.client.Create(ctx, desired); err != nil {
		return nil, fmt.Errorf("creating Secret %s: %w", desired.Name, err)
	}
	r.reportSecret(rc, apply.Created, desired.Name)
	switch {
	case recovered:
		r.events.Normal(rc, cachev1.ReasonBusCertificateRecovered, events.ActionCreate,
			"Secret %s was missing: made it again from the copy in %s, so that restarted nodes rejoin the bus", desired.Name, OperatorSecretName(rc))
	case s.statefulSet != nil:
		r.events.Warning(rc, cachev1.ReasonBusCertificateReplaced, events.ActionCreate,
			"Secret %s and its copy in %s were both missing: made a new bus CA, which the running nodes do not trust; a node that restarts joins the bus again only once every node has restarted", desired.Name, OperatorSecretName(rc))
	}
	return desired.Data, nil
}

// applySecret creates or corrects a generated Secret, with an event.
func (r *Reconciler) applySecret(ctx context.Context, rc *cachev1.RedisCluster, secret *corev1.Secret) error {
	result, err := r.secrets.Apply(ctx, r.client, rc, secret)
	if err != nil {
		return err
	}
	r.reportSecret(rc, result, secret.Name)
	return nil
}

// reportSecret records the event for a generated Secret the reconcile
// created or updated.
func (r *Reconciler) reportSecret(rc *cachev1.RedisCluster, result apply.Result, name string) {
	switch result {
	case apply.Created:
		r.events.Normal(rc, cachev1.ReasonSecretCreated, events.ActionCreate, "Created Secret %s", name)
	case apply.Updated:
		r.events.Normal(rc, cachev1.ReasonSecretUpdated, events.ActionUpdate, "Updated Secret %s", name)
	}
}

// reconcileAccess makes every reachable node enforce s.access: the
// current passwords, the operator's user, and a renewed certificate. Nodes
// that are down get it when they are back; the cluster phase reports them.
func (r *Reconciler) reconcileAccess(ctx context.Context, s *scope) (reconciler.Result, error) {
	rc := s.rc
	res, err := r.admin(rc, s).ReconcileAccess(ctx, s.topo.Nodes(), s.access)
	r.recordActions(rc, res.Actions)
	s.accessDone = err == nil && res.Done()
	s.passwordsRefused = res.Refused
	if why := rotationFailure(!slices.Equal(s.access.KnownPasswords, s.access.Passwords), res, err); why != "" {
		rotationFailures.WithLabelValues(rc.Namespace, rc.Name, why).Inc()
	}
	if err != nil {
		msg := err.Error()
		conditions.MarkFalse(rc, conditions.Ready, cachev1.ReasonClusterError, msg)
		conditions.MarkTrue(rc, cachev1.ConditionProgressing, cachev1.ReasonClusterError, "retrying after: "+msg)
		r.events.Warning(rc, cachev1.ReasonClusterError, events.ActionReconcile, "%s", msg)
		return reconciler.Result{Stop: true}, err
	}
	if res.Done() && !slices.Equal(s.access.KnownPasswords, s.access.Passwords) {
		// Every node enforces the spec's passwords: the next change logs in
		// with them.
		// Bookkeeping, not a change a user would look for: no event.
		if _, err := r.secrets.Apply(ctx, r.client, rc, WithKnownPasswords(s.operatorSecret, s.access.Passwords)); err != nil {
			return reconciler.Result{}, err
		}
	}
	if res.Rotated && res.Done() {
		r.events.Normal(rc, cachev1.ReasonPasswordRotated, events.ActionReconcile, "Every node accepts only the passwords of the spec and presents the current one to its master")
		lastRotation.WithLabelValues(rc.Namespace, rc.Name).SetToCurrentTime()
	}
	if res.Pending != "" {
		s.accessPending = res.Pending
		return reconciler.Requeue(certificateRetry), nil
	}
	return reconciler.Result{}, nil
}

// admin returns an Admin of rc's nodes that works as the operator's user,
// over TLS when the nodes serve it.
func (r *Reconciler) admin(rc *cachev1.RedisCluster, s *scope) *redisadmin.Admin {
	opts := r.adminOpts
	opts.Username, opts.Password = redisadmin.OperatorUser, s.access.OperatorPassword
	if s.tls != nil {
		opts.TLSRootCAs = s.tls.RootCAs
	}
	return redisadmin.New(func(ctx context.Context, pod string) (string, error) {
		return r.resolve(ctx, rc, pod)
	}, opts)
}
