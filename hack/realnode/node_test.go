//go:build realnode

package realnode

// The proof that the real node works, against a running local cluster with
// it (make dev-cluster, then make realnode-test): pods run real containers
// on it, pod-to-pod, host-to-pod and ClusterIP traffic flow, a StatefulSet
// pod's DNS name resolves through CoreDNS while names outside the cluster do
// not, kubectl logs and exec work, a PersistentVolumeClaim gets a volume
// from local-path-provisioner, every address stays on this machine, and
// no cluster process connects anywhere else meanwhile.
//
// It sends traffic only to the cluster's own addresses: the pod network, the
// Service range and CoreDNS, all on this machine.

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/multi-operator/multi-operator/hack/localcluster"
)

var (
	kubeconfig   = os.Getenv("REALNODE_KUBECONFIG")
	kubectlBin   = envOr("KUBECTL", "kubectl")
	busyboxImage = envOr("REALNODE_BUSYBOX_IMAGE", "localhost/realnode-busybox:1")
)

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func kubectl(args ...string) (string, error) {
	return kubectlIn("", args...)
}

func kubectlIn(stdin string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, kubectlBin, append([]string{"--kubeconfig", kubeconfig}, args...)...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if err != nil {
		return out.String(), fmt.Errorf("kubectl %s: %w: %s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), nil
}

// The workload: an HTTP server pod behind a ClusterIP Service, a client pod,
// and a one-replica StatefulSet behind a headless Service, all on the
// test image (Debian's static busybox).
const workload = `
apiVersion: v1
kind: Pod
metadata: {name: server, namespace: NS, labels: {app: server}}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: httpd
    image: IMAGE
    imagePullPolicy: IfNotPresent
    command: [sh, -c, 'echo "server up as $(id -u)"; mkdir -p /tmp/www; echo pong-$(hostname) > /tmp/www/index.html; exec httpd -f -v -p 8080 -h /tmp/www']
    ports: [{containerPort: 8080}]
    readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
---
apiVersion: v1
kind: Service
metadata: {name: server, namespace: NS}
spec:
  selector: {app: server}
  ports: [{port: 80, targetPort: 8080}]
---
apiVersion: v1
kind: Pod
metadata: {name: client, namespace: NS}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: sh
    image: IMAGE
    imagePullPolicy: IfNotPresent
    command: [sh, -c, 'trap "exit 0" TERM; while true; do sleep 1; done']
---
apiVersion: v1
kind: Service
metadata: {name: db, namespace: NS}
spec:
  clusterIP: None
  selector: {app: db}
  ports: [{port: 8080}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: NS}
spec:
  serviceName: db
  replicas: 1
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: httpd
        image: IMAGE
        imagePullPolicy: IfNotPresent
        command: [sh, -c, 'mkdir -p /tmp/www; echo pong-$(hostname) > /tmp/www/index.html; exec httpd -f -p 8080 -h /tmp/www']
        readinessProbe: {tcpSocket: {port: 8080}, periodSeconds: 1}
`

func TestRealNode(t *testing.T) {
	if kubeconfig == "" {
		t.Fatal("REALNODE_KUBECONFIG is not set: run make realnode-test against make dev-cluster")
	}
	g := NewWithT(t)
	ctx := context.Background()
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	g.Expect(err).NotTo(HaveOccurred())
	c, err := client.New(cfg, client.Options{Scheme: clientgoscheme.Scheme})
	g.Expect(err).NotTo(HaveOccurred())

	// Watch every cluster process, the real node's daemons too, for a
	// connection off this machine while the test runs.
	localcluster.ClusterProcesses = append(localcluster.ClusterProcesses, "kubelet", "kube-proxy", "containerd")
	watcher := localcluster.Watch(250*time.Millisecond, Allowed())
	defer func() {
		conns, err := watcher.Stop()
		if err != nil {
			t.Errorf("watching connections: %v", err)
		}
		for _, conn := range conns {
			t.Errorf("connection off this machine: %s", conn)
		}
	}()

	node := &corev1.Node{}
	if err := c.Get(ctx, client.ObjectKey{Name: NodeName}, node); err != nil {
		t.Fatalf("no real node %s in the cluster (make dev-cluster REALNODE=on starts one, or says why it cannot): %v", NodeName, err)
	}
	g.Expect(node.Labels).To(HaveKeyWithValue(LabelRealNode, "true"))
	g.Expect(node.Status.Addresses).To(ContainElement(corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: NodeIP}))

	ns := "realnode-test-" + rand.String(5)
	_, err = kubectl("create", "namespace", ns)
	g.Expect(err).NotTo(HaveOccurred())
	t.Cleanup(func() {
		if _, err := kubectl("delete", "namespace", ns, "--wait=true", "--timeout=60s"); err != nil {
			t.Logf("deleting %s: %v", ns, err)
		}
	})
	manifest := strings.NewReplacer("NS", ns, "IMAGE", busyboxImage).Replace(workload)
	_, err = kubectlIn(manifest, "apply", "-f", "-")
	g.Expect(err).NotTo(HaveOccurred())
	start := time.Now()
	for _, pod := range []string{"server", "client", "db-0"} {
		g.Eventually(func() error {
			_, err := kubectl("-n", ns, "wait", "--for=condition=Ready", "pod/"+pod, "--timeout=5s")
			return err
		}, 90*time.Second, time.Second).Should(Succeed(), "pod %s Ready", pod)
	}
	t.Logf("three pods Ready on the real node in %s", time.Since(start).Round(100*time.Millisecond))

	podNet := netip.MustParsePrefix(PodCIDR)
	podIP := map[string]string{}
	for _, name := range []string{"server", "client", "db-0"} {
		pod := &corev1.Pod{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: name}, pod)).To(Succeed())
		g.Expect(pod.Spec.NodeName).To(Equal(NodeName), "pod %s runs on the real node, not on a tainted kwok node", name)
		ip := netip.MustParseAddr(pod.Status.PodIP)
		g.Expect(podNet.Contains(ip)).To(BeTrue(), "pod %s has %s, in %s", name, ip, PodCIDR)
		podIP[name] = ip.String()
	}
	svc := &corev1.Service{}
	g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "server"}, svc)).To(Succeed())
	g.Expect(netip.MustParsePrefix(ServiceCIDR).Contains(netip.MustParseAddr(svc.Spec.ClusterIP))).To(BeTrue())

	t.Run("kubectl logs", func(t *testing.T) {
		g := NewWithT(t)
		out, err := kubectl("-n", ns, "logs", "server")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).To(ContainSubstring("server up as 65534"))
	})

	t.Run("kubectl exec", func(t *testing.T) {
		g := NewWithT(t)
		out, err := kubectl("-n", ns, "exec", "client", "--", "sh", "-c", "echo exec-ok; id -u; hostname")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.Fields(out)).To(Equal([]string{"exec-ok", "65534", "client"}))
	})

	// busybox's nc speaks HTTP/1.0 well enough; its wget crashes when static.
	httpGet := func(addr string) (string, error) {
		return kubectl("-n", ns, "exec", "client", "--", "sh", "-c",
			fmt.Sprintf(`printf 'GET / HTTP/1.0\r\n\r\n' | nc -w 5 %s | tail -n 1`, addr))
	}

	t.Run("pod to pod", func(t *testing.T) {
		g := NewWithT(t)
		out, err := httpGet(podIP["server"] + " 8080")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.TrimSpace(out)).To(Equal("pong-server"))
	})

	t.Run("ClusterIP", func(t *testing.T) {
		g := NewWithT(t)
		g.Eventually(func() (string, error) {
			out, err := httpGet(svc.Spec.ClusterIP + " 80")
			return strings.TrimSpace(out), err
		}, 30*time.Second, time.Second).Should(Equal("pong-server"))
	})

	t.Run("host to pod", func(t *testing.T) {
		g := NewWithT(t)
		conn, err := net.DialTimeout("tcp", net.JoinHostPort(podIP["server"], "8080"), 5*time.Second)
		g.Expect(err).NotTo(HaveOccurred())
		defer func() { _ = conn.Close() }()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		_, err = io.WriteString(conn, "GET / HTTP/1.0\r\n\r\n")
		g.Expect(err).NotTo(HaveOccurred())
		var last string
		s := bufio.NewScanner(conn)
		for s.Scan() {
			last = s.Text()
		}
		g.Expect(last).To(Equal("pong-server"))
	})

	t.Run("DNS", func(t *testing.T) {
		g := NewWithT(t)
		lookup := func(name string) (string, error) {
			return kubectl("-n", ns, "exec", "client", "--", "nslookup", name)
		}
		// The StatefulSet pod's own name, through the headless Service.
		name := fmt.Sprintf("db-0.db.%s.svc.cluster.local", ns)
		// CoreDNS caches a name not found yet (its EndpointSlice may come a
		// moment after the pod is Ready) for up to 5 s: see coredns.yaml.
		g.Eventually(func() (string, error) { return lookup(name) }, 60*time.Second, time.Second).
			Should(ContainSubstring("Address: " + podIP["db-0"]))
		out, err := lookup("server." + ns + ".svc.cluster.local")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out).To(ContainSubstring("Address: " + svc.Spec.ClusterIP))
		g.Expect(out).To(ContainSubstring("Server:\t\t" + DNSIP))
		// Short names work through the search path, and the pod is reachable by it.
		out, err = httpGet(fmt.Sprintf("db-0.db.%s.svc.cluster.local 8080", ns))
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.TrimSpace(out)).To(Equal("pong-db-0"))
		// CoreDNS has no forward plugin: a name outside the cluster fails
		// there, and the query goes nowhere else.
		out, err = lookup("example.com.")
		g.Expect(err).To(HaveOccurred())
		g.Expect(out + err.Error()).To(ContainSubstring("SERVFAIL"))
	})

	t.Run("PersistentVolumeClaim", func(t *testing.T) {
		g := NewWithT(t)
		claim := strings.NewReplacer("NS", ns, "IMAGE", busyboxImage).Replace(`
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: NS}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 10Mi}}
---
apiVersion: v1
kind: Pod
metadata: {name: writer, namespace: NS}
spec:
  terminationGracePeriodSeconds: 1
  containers:
  - name: sh
    image: IMAGE
    imagePullPolicy: IfNotPresent
    command: [sh, -c, 'echo kept > /data/file; trap "exit 0" TERM; while true; do sleep 1; done']
    volumeMounts: [{name: data, mountPath: /data}]
  volumes: [{name: data, persistentVolumeClaim: {claimName: data}}]
`)
		_, err := kubectlIn(claim, "apply", "-f", "-")
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func() error {
			_, err := kubectl("-n", ns, "wait", "--for=condition=Ready", "pod/writer", "--timeout=5s")
			return err
		}, 90*time.Second, time.Second).Should(Succeed(), "the claim is bound (the default StorageClass, local-path) and the pod runs")
		pvc := &corev1.PersistentVolumeClaim{}
		g.Expect(c.Get(ctx, client.ObjectKey{Namespace: ns, Name: "data"}, pvc)).To(Succeed())
		pv := &corev1.PersistentVolume{}
		g.Expect(c.Get(ctx, client.ObjectKey{Name: pvc.Spec.VolumeName}, pv)).To(Succeed())
		g.Expect(pv.Spec.HostPath).NotTo(BeNil())
		dir := pv.Spec.HostPath.Path
		// The pod's write is in the node's directory.
		g.Eventually(func() (string, error) {
			b, err := os.ReadFile(dir + "/file")
			return string(b), err
		}, 10*time.Second, 200*time.Millisecond).Should(Equal("kept\n"))
		// Deleting the claim removes the volume and its directory.
		_, err = kubectl("-n", ns, "delete", "pod", "writer", "--wait=true", "--timeout=60s")
		g.Expect(err).NotTo(HaveOccurred())
		_, err = kubectl("-n", ns, "delete", "pvc", "data", "--wait=true", "--timeout=60s")
		g.Expect(err).NotTo(HaveOccurred())
		g.Eventually(func() bool {
			_, err := os.Stat(dir)
			return os.IsNotExist(err)
		}, 60*time.Second, 500*time.Millisecond).Should(BeTrue(), "%s is removed", dir)
	})

	t.Run("addresses stay on this machine", func(t *testing.T) {
		g := NewWithT(t)
		g.Expect(localcluster.CheckAddresses(ctx, c, BridgeDevice)).To(Succeed())
		// Without the bridge allowed, the pod IPs are named.
		err := localcluster.CheckAddresses(ctx, c)
		g.Expect(err).To(MatchError(ContainSubstring(podIP["server"] + ", which routes through " + BridgeDevice)))
	})

	t.Run("the pod network reaches nothing else", func(t *testing.T) {
		g := NewWithT(t)
		// The two drop rules, first in FORWARD (read, not tried: the test
		// sends nothing off the machine).
		out, err := exec.Command("iptables", "-w", "-S", "FORWARD").Output()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(strings.Split(string(out), "\n")[1]).To(Equal("-A FORWARD -j MO-REALNODE-FORWARD"))
		out, err = exec.Command("iptables", "-w", "-S", "MO-REALNODE-FORWARD").Output()
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(string(out)).To(ContainSubstring("-i " + BridgeDevice + " ! -o " + BridgeDevice))
		g.Expect(string(out)).To(ContainSubstring("! -i " + BridgeDevice + " -o " + BridgeDevice))
		// CoreDNS's configuration has no forward plugin.
		out2, err := kubectl("-n", "kube-system", "get", "configmap", "coredns", "-o", "jsonpath={.data.Corefile}")
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(out2).NotTo(ContainSubstring("forward"))
	})
}
