// Package maketargets runs the Makefile's targets that reach a cluster
// against a kube-apiserver of the test's own (envtest), never the local
// cluster: what they change there, and what they refuse to change.
package maketargets

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilruntime "k8s.io/apimachinery/pkg/util/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/hack/reporoot"
	"github.com/multi-operator/multi-operator/test/framework/testenv"
)

// sharedContext names the test's cluster in its kubeconfig: a refusal must
// name it, so that the user sees which cluster was spared.
const sharedContext = "shared-cluster"

// TestConfigLocalReachesOnlyTheLocalCluster holds make install, make
// uninstall and make run to issue #41: config/local, which points TDSet's
// webhooks at https://localhost:9443, reaches only the local cluster (any
// kubeconfig with the API server and CA of $(DEV_KUBECONFIG)) or a cluster
// named by LOCAL_WEBHOOKS=yes. Elsewhere they fail with one line before
// changing anything.
func TestConfigLocalReachesOnlyTheLocalCluster(t *testing.T) {
	g := NewWithT(t)
	root, err := reporoot.Find()
	g.Expect(err).NotTo(HaveOccurred())
	kubectl := tools(t, root)

	// A control plane without CRDs, so that any CRD seen was installed by make.
	cfg := testenv.StartControlPlane(t, nil)
	scheme := runtime.NewScheme()
	utilruntime.Must(corev1.AddToScheme(scheme))
	utilruntime.Must(apiextensionsv1.AddToScheme(scheme))
	utilruntime.Must(admissionregistrationv1.AddToScheme(scheme))
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	g.Expect(err).NotTo(HaveOccurred())

	dir := t.TempDir()
	shared := writeKubeconfig(t, filepath.Join(dir, "shared"), cfg, sharedContext, cfg.CAData, "")
	// The local cluster's kubeconfig as kwokctl writes it: another file,
	// other names, the CA in a file of its own.
	caFile := filepath.Join(dir, "ca.crt")
	g.Expect(os.WriteFile(caFile, cfg.CAData, 0o600)).To(Succeed())
	local := writeKubeconfig(t, filepath.Join(dir, "local"), cfg, "kwok-dev", nil, caFile)
	// A local cluster at the same address with a CA of its own, as after
	// make dev-cluster-down and another cluster on the same port.
	otherCA := writeKubeconfig(t, filepath.Join(dir, "other-ca"), cfg, "kwok-dev", []byte("another CA"), "")
	m := maker{root: root, kubectl: kubectl, env: makeEnv(shared, dir)}
	// Also while a target is expected to refuse: one that deletes instead
	// must fail the test, not hang it.
	t.Cleanup(finalizeNamespaces(t, cfg))

	// The API server makes the default/kubernetes Service a moment after
	// it starts serving: a snapshot before that would count it as a change.
	g.Eventually(func() error {
		return c.Get(context.Background(), client.ObjectKey{Namespace: "default", Name: "kubernetes"}, &corev1.Service{})
	}, time.Minute, 100*time.Millisecond).Should(Succeed())
	before := snapshot(g, c)
	out, err := m.run("install")
	g.Expect(err).To(HaveOccurred(), "make install on a cluster that is not the local one:\n%s", out)
	expectRefusal(g, out, "make install")
	g.Expect(snapshot(g, c)).To(Equal(before), "make install changed the cluster it refused")

	// make run is refused after its own checks, before config/local; its
	// lock is the test's, not that of a make run in another terminal.
	out, err = m.run("run", "-o", "deps", "-o", "build", "RUN_LOCK="+filepath.Join(dir, "run.lock"))
	g.Expect(err).To(HaveOccurred(), "make run on a cluster that is not the local one:\n%s", out)
	expectRefusal(g, out, "make run")
	g.Expect(snapshot(g, c)).To(Equal(before), "make run changed the cluster it refused")

	out, err = m.run("install", "LOCAL_WEBHOOKS=yes")
	g.Expect(err).NotTo(HaveOccurred(), "make install LOCAL_WEBHOOKS=yes:\n%s", out)
	crd := &apiextensionsv1.CustomResourceDefinition{}
	g.Expect(c.Get(context.Background(), client.ObjectKey{Name: "tdsets.schedule.rs"}, crd)).To(Succeed())
	g.Expect(crd.Spec.Conversion).NotTo(BeNil())
	g.Expect(crd.Spec.Conversion.Webhook).NotTo(BeNil())
	g.Expect(crd.Spec.Conversion.Webhook.ClientConfig.URL).To(HaveValue(Equal("https://localhost:9443/convert")))

	installed := snapshot(g, c)
	out, err = m.run("uninstall")
	g.Expect(err).To(HaveOccurred(), "make uninstall on a cluster that is not the local one:\n%s", out)
	expectRefusal(g, out, "make uninstall")
	out, err = m.run("uninstall", "DEV_KUBECONFIG="+otherCA)
	g.Expect(err).To(HaveOccurred(), "make uninstall on the local cluster's address with another CA:\n%s", out)
	expectRefusal(g, out, "make uninstall")
	g.Expect(snapshot(g, c)).To(Equal(installed), "make uninstall changed the cluster it refused")

	// Another kubeconfig of the local cluster is the local cluster.
	out, err = m.run("install", "DEV_KUBECONFIG="+local)
	g.Expect(err).NotTo(HaveOccurred(), "make install on the local cluster:\n%s", out)
	expectKindsServed(g, c)
	// kubectl waits for every object to go: the CRDs' cleanup by the API
	// server may take longer than a minute on a loaded machine.
	out, err = m.runWithin(3*time.Minute, "uninstall", "DEV_KUBECONFIG="+local)
	g.Expect(err).NotTo(HaveOccurred(), "make uninstall on the local cluster:\n%s\nwhat was left:\n%s", out, leftovers(c))
	err = c.Get(context.Background(), client.ObjectKey{Name: "tdsets.schedule.rs"}, crd)
	g.Expect(apierrors.IsNotFound(err)).To(BeTrue(), "make uninstall left the TDSet CRD: %v", err)
}

// expectKindsServed waits until the API server lists the objects of every
// installed CRD's kinds. A CRD deleted while the storage of its objects is
// still starting waits minutes for its cleanup ("storage is
// (re)initializing"), far longer than make uninstall should on a cluster
// whose CRDs were installed a moment before.
func expectKindsServed(g Gomega, c client.Client) {
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	g.ExpectWithOffset(1, c.List(context.Background(), crds)).To(Succeed())
	g.ExpectWithOffset(1, crds.Items).NotTo(BeEmpty())
	for _, crd := range crds.Items {
		for _, v := range crd.Spec.Versions {
			if !v.Served {
				continue
			}
			list := &unstructured.UnstructuredList{}
			list.SetGroupVersionKind(schema.GroupVersionKind{Group: crd.Spec.Group, Version: v.Name, Kind: crd.Spec.Names.ListKind})
			g.EventuallyWithOffset(1, func() error { return c.List(context.Background(), list) }, time.Minute, 200*time.Millisecond).
				Should(Succeed(), "listing %s %s", crd.Name, v.Name)
		}
	}
}

// tools returns kubectl, checks that kube-apiserver and etcd are there, and
// skips the test when they or the commands the recipes run are missing,
// unless the setup must be complete (REQUIRE_TEST_DEPS=1 or CI=true).
func tools(t *testing.T, root string) (kubectl string) {
	t.Helper()
	var missing []string
	assets, err := testenv.AssetsDir(root)
	if err != nil {
		missing = append(missing, err.Error())
	}
	kubectl = cmp.Or(os.Getenv("KUBECTL"), filepath.Join(assets, "kubectl"))
	if _, err := os.Stat(kubectl); err != nil {
		missing = append(missing, "kubectl: "+err.Error())
	}
	for _, cmd := range []string{"make", "bash", "flock", "timeout"} {
		if _, err := exec.LookPath(cmd); err != nil {
			missing = append(missing, cmd)
		}
	}
	if len(missing) == 0 {
		return kubectl
	}
	if os.Getenv("CI") == "true" || os.Getenv("REQUIRE_TEST_DEPS") == "1" {
		t.Fatalf("missing: %s", strings.Join(missing, "; "))
	}
	t.Skipf("missing (make test builds the control plane and kubectl into bin/): %s", strings.Join(missing, "; "))
	return ""
}

// maker runs make targets in the repository with a kubeconfig of the test's.
type maker struct {
	root, kubectl string
	env           []string
}

// run runs make with args and returns its output. No target regenerates
// the manifests or builds anything: they are what `make verify` checks, and
// other test packages read config/ meanwhile. kubectl is the test's, so
// make never builds one. A make still running after a minute is killed
// with everything it started.
func (m maker) run(args ...string) (string, error) {
	return m.runWithin(time.Minute, args...)
}

// runWithin is run with its own time limit.
func (m maker) runWithin(limit time.Duration, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cmd := exec.CommandContext(ctx, "make", append([]string{"--no-print-directory", "-o", "manifests", "KUBECTL=" + m.kubectl}, args...)...)
	cmd.Dir = m.root
	cmd.Env = m.env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// makeEnv is the test's environment with KUBECONFIG set to kubeconfig and
// kubectl's cache under dir, less what would change what make does.
func makeEnv(kubeconfig, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		switch name, _, _ := strings.Cut(kv, "="); name {
		// A make running this test (make test) passes its flags and its
		// command-line variables, LOCAL_WEBHOOKS=yes among them, through
		// MAKEFLAGS to every make below it.
		case "MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEOVERRIDES", "GNUMAKEFLAGS",
			"KUBECONFIG", "KUBECACHEDIR", "LOCAL_WEBHOOKS", "DEV_KUBECONFIG":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "KUBECONFIG="+kubeconfig, "KUBECACHEDIR="+filepath.Join(dir, "kube-cache"))
}

// writeKubeconfig writes to path a kubeconfig whose current context, called
// context, reaches cfg's API server as cfg's user, trusting caData or the
// file caFile.
func writeKubeconfig(t *testing.T, path string, cfg *rest.Config, context string, caData []byte, caFile string) string {
	t.Helper()
	kc := clientcmdapi.NewConfig()
	kc.Clusters[context] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: caData, CertificateAuthority: caFile}
	kc.AuthInfos[context] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData}
	kc.Contexts[context] = &clientcmdapi.Context{Cluster: context, AuthInfo: context}
	kc.CurrentContext = context
	if err := clientcmd.WriteToFile(*kc, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// expectRefusal expects out to hold the guard's one line for target, which
// names the context and both ways on.
func expectRefusal(g Gomega, out, target string) {
	var refusals []string
	for line := range strings.Lines(out) {
		if strings.Contains(line, "refused") {
			refusals = append(refusals, line)
		}
	}
	g.ExpectWithOffset(1, refusals).To(HaveLen(1), "one line of refusal in:\n%s", out)
	g.ExpectWithOffset(1, refusals[0]).To(And(
		HavePrefix(target+": refused:"),
		ContainSubstring(`"`+sharedContext+`"`),
		ContainSubstring("make dev-cluster"),
		ContainSubstring("LOCAL_WEBHOOKS=yes"),
	))
}

// snapshot returns the resourceVersion of every object config/local holds
// or could hold, by kind, namespace and name: a create, an update or a
// delete changes it.
func snapshot(g Gomega, c client.Client) map[string]string {
	out := map[string]string{}
	for kind, list := range map[string]client.ObjectList{
		"CustomResourceDefinition":       &apiextensionsv1.CustomResourceDefinitionList{},
		"ValidatingWebhookConfiguration": &admissionregistrationv1.ValidatingWebhookConfigurationList{},
		"MutatingWebhookConfiguration":   &admissionregistrationv1.MutatingWebhookConfigurationList{},
		"Namespace":                      &corev1.NamespaceList{},
		"Service":                        &corev1.ServiceList{},
		"Secret":                         &corev1.SecretList{},
	} {
		g.ExpectWithOffset(1, c.List(context.Background(), list)).To(Succeed())
		g.ExpectWithOffset(1, apimeta.EachListItem(list, func(o runtime.Object) error {
			m, err := apimeta.Accessor(o)
			if err == nil {
				out[kind+" "+m.GetNamespace()+"/"+m.GetName()] = m.GetResourceVersion()
			}
			return err
		})).To(Succeed())
	}
	return out
}

// leftovers describes the CRDs and namespaces still there, with what holds
// them, for a failure message.
func leftovers(c client.Client) string {
	var b strings.Builder
	crds := &apiextensionsv1.CustomResourceDefinitionList{}
	if err := c.List(context.Background(), crds); err != nil {
		fmt.Fprintf(&b, "listing CRDs: %v\n", err)
	}
	for _, crd := range crds.Items {
		fmt.Fprintf(&b, "CRD %s deleting=%v finalizers=%v", crd.Name, crd.DeletionTimestamp != nil, crd.Finalizers)
		for _, cond := range crd.Status.Conditions {
			fmt.Fprintf(&b, " %s=%s(%s: %s)", cond.Type, cond.Status, cond.Reason, cond.Message)
		}
		b.WriteString("\n")
	}
	nss := &corev1.NamespaceList{}
	if err := c.List(context.Background(), nss); err != nil {
		fmt.Fprintf(&b, "listing namespaces: %v\n", err)
	}
	for _, ns := range nss.Items {
		if ns.DeletionTimestamp != nil {
			fmt.Fprintf(&b, "Namespace %s deleting, finalizers=%v spec.finalizers=%v\n", ns.Name, ns.Finalizers, ns.Spec.Finalizers)
		}
	}
	return b.String()
}

// finalizeNamespaces plays the namespace controller, which envtest does not
// run, until the returned func is called: it finalizes each namespace being
// deleted, so that make uninstall's kubectl delete, which waits for every
// object to go, returns.
func finalizeNamespaces(t *testing.T, cfg *rest.Config) func() {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			list, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
			if err == nil {
				for i := range list.Items {
					ns := &list.Items[i]
					if ns.DeletionTimestamp != nil && len(ns.Spec.Finalizers) > 0 {
						ns.Spec.Finalizers = nil
						_, _ = cs.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
					}
				}
			}
			select {
			case <-ctx.Done():
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() { cancel(); <-done }
}
