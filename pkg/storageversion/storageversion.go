// Package storageversion moves every object of a custom resource to the
// CRD's storage version and then trims the CRD's status.storedVersions to
// that version alone.
//
// When a CRD's storage version changes (TDSet: v1 to v2), the API server
// writes new and changed objects in the new version but leaves the others
// in etcd as they were, and status.storedVersions keeps listing the old
// version until someone says that no object is stored in it any more. Until
// then the old version cannot be removed from the CRD.
//
// Migrate does what the StorageVersionMigration API (storagemigration.k8s.io,
// the in-tree successor of kube-storage-version-migrator) does, for clusters
// that do not have it: it lists the objects and writes each one back
// unchanged, which makes the API server encode it in the storage version,
// and once every object went through it sets storedVersions.
package storageversion

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// FieldManager is the field manager of Migrate's writes. A write changes no
// field, so it never shows up in an object's managedFields.
const FieldManager = "multi-operator-migrate-storage"

// pageSize is how many objects one list request returns; a variable so that
// the tests can make several pages out of a few objects.
var pageSize int64 = 500

// maxAttempts bounds the writes of one object that fail with a Conflict
// because someone else keeps changing it. Each such change also stores it
// in the storage version, but Migrate only counts its own writes.
const maxAttempts = 10

// Result is what Migrate did to one CRD.
type Result struct {
	// CRD is the CRD's name, such as tdsets.schedule.rs.
	CRD string
	// StorageVersion is the CRD's storage version, which every object is
	// now stored in.
	StorageVersion string
	// Migrated counts the objects written back in StorageVersion.
	Migrated int
	// Unchanged counts the objects among Migrated whose write the API
	// server skipped (their resourceVersion did not change) because etcd
	// already held exactly what it would write: objects stored in the
	// storage version before. A second run after a complete one counts
	// every object here.
	Unchanged int
	// Gone counts the objects deleted between the list and their write.
	Gone int
	// PreviousStoredVersions is the CRD's status.storedVersions before the
	// run, such as [v1 v2].
	PreviousStoredVersions []string
	// StoredVersions is the CRD's status.storedVersions after the run:
	// [StorageVersion].
	StoredVersions []string
}

// Migrate rewrites every object of the CRD named crdName (such as
// tdsets.schedule.rs) in the CRD's storage version and then sets the CRD's
// status.storedVersions to that version alone. It is the step that
// StorageVersionMigration (storagemigration.k8s.io) does on clusters that
// have that API, for those that do not.
//
// It first waits until the API server's discovery names the storage
// version (the resource's storageVersionHash), since an API server applies
// a changed CRD a moment after the write: run right after the new CRD was
// applied, Migrate would otherwise write objects back in the previous
// version. With several API servers, each answers for itself; give them the
// time to take up the new CRD.
//
// Each object is read in the storage version (a paginated list across all
// namespaces) and written back as read, resourceVersion included, with an
// Update: the API server then encodes it in the storage version; it skips
// the write of an object already stored so. An object that changed since
// the list (Conflict) is read again and written again; one deleted since
// (NotFound) is counted as gone. A conversion webhook the CRD names must be
// serving throughout.
//
// storedVersions is only trimmed after every object went through, with the
// CRD's resourceVersion, and only while the storage version is still the one
// the objects were written in. Migrate stops at the first error without
// touching storedVersions; running it again is safe and redoes the whole
// list (the objects already written cost a skipped write each). Running it
// on a CRD already migrated changes nothing.
//
// cfg needs get on the CRD, update on customresourcedefinitions/status,
// and list and update on the custom resource.
func Migrate(ctx context.Context, cfg *rest.Config, crdName string, log logr.Logger) (Result, error) {
	res := Result{CRD: crdName}
	scheme := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(scheme); err != nil {
		return res, err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return res, fmt.Errorf("%s: creating a client: %w", crdName, err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return res, fmt.Errorf("%s: creating a dynamic client: %w", crdName, err)
	}

	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
		return res, fmt.Errorf("reading CRD %s: %w", crdName, err)
	}
	version, err := storageVersion(crd)
	if err != nil {
		return res, err
	}
	res.StorageVersion = version
	res.PreviousStoredVersions = slices.Clone(crd.Status.StoredVersions)
	log = log.WithValues("crd", crdName, "storageVersion", version)
	log.Info("Rewriting every object in the storage version", "storedVersions", crd.Status.StoredVersions)

	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: version, Resource: crd.Spec.Names.Plural}
	if err := waitForStorageVersion(ctx, cfg, gvr, crd.Spec.Names.Kind, log); err != nil {
		return res, fmt.Errorf("%s: %w", crdName, err)
	}
	if err := rewriteAll(ctx, dyn.Resource(gvr), gvr.GroupVersion().WithKind(crd.Spec.Names.Kind), &res, log); err != nil {
		return res, err
	}
	log.Info("Rewrote every object", "migrated", res.Migrated, "unchanged", res.Unchanged, "gone", res.Gone)

	stored, err := trimStoredVersions(ctx, c, crdName, version)
	if err != nil {
		return res, err
	}
	res.StoredVersions = stored
	log.Info("Set status.storedVersions", "storedVersions", stored)
	return res, nil
}

// storageVersionTimeout bounds the wait for discovery to name the storage version.
const storageVersionTimeout = time.Minute

// waitForStorageVersion waits until the API server's discovery gives the
// resource the storageVersionHash of gvr's version and kind, which it does
// once it has taken up a CRD with that storage version. A server that
// gives no hash at all is taken at its word.
func waitForStorageVersion(ctx context.Context, cfg *rest.Config, gvr schema.GroupVersionResource, kind string, log logr.Logger) error {
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return fmt.Errorf("creating a discovery client: %w", err)
	}
	want := storageVersionHash(gvr.Group, gvr.Version, kind)
	var got string
	logged := false
	err = wait.PollUntilContextTimeout(ctx, 250*time.Millisecond, storageVersionTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
		if err != nil {
			if apierrors.IsNotFound(err) {
				return false, nil // the version is not served yet
			}
			return false, err
		}
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				got = r.StorageVersionHash
				if got == "" || got == want {
					return true, nil
				}
				if !logged {
					log.Info("Waiting for the API server to store in the new storage version")
					logged = true
				}
				return false, nil
			}
		}
		return false, nil
	})
	if err != nil {
		return fmt.Errorf("waiting for the API server to store %s in %s (discovery's storageVersionHash %q, want %q): %w", gvr.Resource, gvr.GroupVersion(), got, want, err)
	}
	return nil
}

// storageVersionHash is the API server's hash of a storage version
// (k8s.io/apiserver/pkg/endpoints/discovery.StorageVersionHash, which this
// copies so as not to link the API server's packages): the first 8 bytes of
// the SHA-256 of "group/version/kind", in base64.
func storageVersionHash(group, version, kind string) string {
	sum := sha256.Sum256([]byte(group + "/" + version + "/" + kind))
	return base64.StdEncoding.EncodeToString(sum[:8])
}

// storageVersion returns the version crd stores its objects in, which must
// be served, since Migrate reads and writes through it.
func storageVersion(crd *apiextensionsv1.CustomResourceDefinition) (string, error) {
	for _, v := range crd.Spec.Versions {
		if !v.Storage {
			continue
		}
		if !v.Served {
			return "", fmt.Errorf("CRD %s: the storage version %s is not served, so its objects cannot be rewritten through it", crd.Name, v.Name)
		}
		return v.Name, nil
	}
	return "", fmt.Errorf("CRD %s has no storage version", crd.Name)
}

// rewriteAll lists the resource page by page across all namespaces and
// writes each object back, counting into res.
func rewriteAll(ctx context.Context, ri dynamic.NamespaceableResourceInterface, gvk schema.GroupVersionKind, res *Result, log logr.Logger) error {
	cont := ""
	for page := 1; ; page++ {
		list, err := ri.List(ctx, metav1.ListOptions{Limit: pageSize, Continue: cont})
		if err != nil {
			// A pass longer than etcd's compaction interval outlives its
			// continue token. The error carries one that goes on without
			// the list's snapshot: objects created or changed since are
			// already stored in the storage version, and every older one
			// after the last key listed still comes.
			if next := expiredContinue(err); cont != "" && next != "" {
				log.Info("The list's continue token expired; going on from where it stopped without its snapshot", "page", page)
				cont = next
				continue
			}
			return fmt.Errorf("%s: listing the objects in %s: %w", res.CRD, gvk.Version, err)
		}
		for i := range list.Items {
			obj := &list.Items[i]
			// Items of a list may leave out their kind; an Update needs it.
			obj.SetGroupVersionKind(gvk)
			if err := rewrite(ctx, ri, obj, res, log); err != nil {
				return err
			}
		}
		log.V(1).Info("Rewrote a page", "page", page, "objects", len(list.Items), "migrated", res.Migrated)
		cont = list.GetContinue()
		if cont == "" {
			return nil
		}
	}
}

// expiredContinue returns the continue token an expired list's error offers
// for going on, or "".
func expiredContinue(err error) string {
	if !apierrors.IsResourceExpired(err) {
		return ""
	}
	var status apierrors.APIStatus
	if !errors.As(err, &status) {
		return ""
	}
	return status.Status().Continue
}

// rewrite writes obj back as it is, so that the API server stores it in the
// version it was read in, the storage version. On a Conflict it reads the
// object again and writes that.
func rewrite(ctx context.Context, ri dynamic.NamespaceableResourceInterface, obj *unstructured.Unstructured, res *Result, log logr.Logger) error {
	ns, name := obj.GetNamespace(), obj.GetName()
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	for attempt := 1; ; attempt++ {
		updated, err := ri.Namespace(ns).Update(ctx, obj, metav1.UpdateOptions{FieldManager: FieldManager})
		switch {
		case err == nil:
			res.Migrated++
			if updated.GetResourceVersion() == obj.GetResourceVersion() {
				res.Unchanged++
			}
			log.V(1).Info("Rewrote", "object", key, "unchanged", updated.GetResourceVersion() == obj.GetResourceVersion())
			return nil
		case apierrors.IsNotFound(err):
			res.Gone++
			log.V(1).Info("Gone before its write", "object", key)
			return nil
		case !apierrors.IsConflict(err):
			return fmt.Errorf("%s: rewriting %s: %w", res.CRD, key, err)
		case attempt == maxAttempts:
			return fmt.Errorf("%s: rewriting %s: it changed under each of %d writes; run again: %w", res.CRD, key, maxAttempts, err)
		}
		fresh, err := ri.Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			res.Gone++
			log.V(1).Info("Gone before its write", "object", key)
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: reading %s again after a conflict: %w", res.CRD, key, err)
		}
		obj = fresh
	}
}

// trimStoredVersions sets the CRD's status.storedVersions to [version]
// through the status subresource, retrying on a Conflict. It refuses when
// the storage version is no longer version: objects may then have been
// written in another one while Migrate ran.
func trimStoredVersions(ctx context.Context, c client.Client, crdName, version string) ([]string, error) {
	var stored []string
	err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := c.Get(ctx, client.ObjectKey{Name: crdName}, crd); err != nil {
			return err
		}
		now, err := storageVersion(crd)
		if err != nil {
			return err
		}
		if now != version {
			return fmt.Errorf("the storage version changed from %s to %s while the objects were rewritten; run again", version, now)
		}
		if slices.Equal(crd.Status.StoredVersions, []string{version}) {
			stored = crd.Status.StoredVersions
			return nil
		}
		crd.Status.StoredVersions = []string{version}
		if err := c.Status().Update(ctx, crd); err != nil {
			return err
		}
		stored = crd.Status.StoredVersions
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: setting status.storedVersions to [%s]: %w", crdName, version, err)
	}
	return stored, nil
}
