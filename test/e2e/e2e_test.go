//go:build e2e

package e2e

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"sigs.k8s.io/yaml"
)

// sample is one file of samples/.
type sample struct {
	file, apiVersion, kind, name, namespace string
}

// readSamples reads every file of samples/, in name order, as kubectl
// apply -f samples/ does.
func readSamples(t *testing.T) []sample {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, "samples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no samples: %v", err)
	}
	var out []sample
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var obj struct {
			APIVersion string `json:"apiVersion"`
			Kind       string `json:"kind"`
			Metadata   struct {
				Name      string `json:"name"`
				Namespace string `json:"namespace"`
			} `json:"metadata"`
		}
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, sample{file: f, apiVersion: obj.APIVersion, kind: obj.Kind, name: obj.Metadata.Name, namespace: obj.Metadata.Namespace})
	}
	return out
}

// loadSamples returns the samples of a kind: the files of samples/ but
// the namespaces they need (see namespaceFile).
func loadSamples(t *testing.T) []sample {
	var out []sample
	for _, s := range readSamples(t) {
		if s.kind != "Namespace" {
			out = append(out, s)
		}
	}
	return out
}

// namespaceFile is the file of samples/ that creates the namespace s names,
// sorted before s's own file as kubectl apply -f samples/ reads them.
func namespaceFile(t *testing.T, s sample) string {
	t.Helper()
	for _, f := range readSamples(t) {
		if f.kind == "Namespace" && f.name == s.namespace && f.file < s.file {
			return f.file
		}
	}
	t.Fatalf("%s names namespace %s, which no file of samples/ before it creates: kubectl apply -f samples/ fails", filepath.Base(s.file), s.namespace)
	return ""
}

// expectations say what "working" means for each kind once its sample is applied.
var expectations = map[string]func(t *testing.T, g Gomega, ns, name string){
	"TDSet": func(t *testing.T, g Gomega, ns, name string) {
		kubectl(t, "wait", "--for=condition=Ready", "-n", ns, "tdset/"+name, "--timeout=90s")
		// Both versions read the same object, whatever version the sample is.
		desired := kubectl(t, "get", "tdsets.v2.schedule.rs", "-n", ns, name, "-o", "jsonpath={.status.currentReplicas}")
		g.Expect(desired).NotTo(BeEmpty())
		g.Expect(kubectl(t, "get", "tdsets.v1.schedule.rs", "-n", ns, name, "-o", "jsonpath={.status.desiredReplicas}")).To(Equal(desired))
		if kind := kubectl(t, "get", "tdsets.v2.schedule.rs", "-n", ns, name, "-o", "jsonpath={.spec.scaleTargetRef.kind}"); kind != "" {
			// A TDSet that scales another sample: Ready says the target
			// runs the count, which its scale subresource reports.
			g.Expect(kubectl(t, "get", "tdsets.v2.schedule.rs", "-n", ns, name, "-o", "jsonpath={.status.target.observedReplicas}")).To(Equal(desired), "the %s runs the current window's count", kind)
			return
		}
		g.Eventually(func() string {
			out, _ := run("get", "deployment", "-n", ns, name, "-o", "jsonpath={.status.readyReplicas}")
			return strings.TrimSpace(out)
		}).Should(Equal(desired), "the Deployment runs the current window's replica count, all ready")
	},
	"Memcached": func(t *testing.T, g Gomega, ns, name string) {
		kubectl(t, "wait", "--for=condition=Available", "-n", ns, "memcached/"+name, "--timeout=90s")
		kubectl(t, "wait", "--for=condition=Ready", "-n", ns, "memcached/"+name, "--timeout=90s")
		if !realNode {
			return
		}
		// Real memcached servers, past their real probes: each answers
		// stats at its pod IP.
		ips := strings.Fields(kubectl(t, "get", "pods", "-n", ns, "-l", "app.kubernetes.io/instance="+name, "-o", "jsonpath={.items[*].status.podIP}"))
		g.Expect(ips).NotTo(BeEmpty())
		for _, ip := range ips {
			g.Expect(memcachedStats(net.JoinHostPort(ip, "11211"))).To(ContainSubstring("STAT pid "), "memcached at %s", ip)
		}
	},
	"WhaleSay": func(t *testing.T, g Gomega, ns, name string) {
		kubectl(t, "wait", "--for=condition=Ready", "-n", ns, "whalesay/"+name, "--timeout=90s")
		g.Expect(kubectl(t, "get", "whalesay", "-n", ns, name, "-o", "jsonpath={.status.phase}")).To(Equal("Succeeded"))
		job := kubectl(t, "get", "whalesay", "-n", ns, name, "-o", "jsonpath={.status.jobName}")
		kubectl(t, "wait", "--for=condition=Complete", "-n", ns, "job/"+job, "--timeout=30s")
		output := kubectl(t, "get", "whalesay", "-n", ns, name, "-o", "jsonpath={.status.output}")
		if realNode {
			// The real cowsay drew the message.
			message := kubectl(t, "get", "whalesay", "-n", ns, name, "-o", "jsonpath={.spec.message}")
			g.Expect(output).To(ContainSubstring("< "+message+" >"), "cowsay's bubble holds the message")
			return
		}
		// kwok serves the simulated node's kubelet API on loopback and has no
		// log to give: it answers at once, so the controller's bounded log
		// read ends at once too, with an empty output.
		began := time.Now()
		out, err := run("logs", "-n", ns, "job/"+job)
		g.Expect(err).To(HaveOccurred())
		g.Expect(out).To(ContainSubstring("no logs found for container"), "kwok itself answers the log read")
		g.Expect(time.Since(began)).To(BeNumerically("<", 5*time.Second), "the answer comes from this machine, at once")
		g.Expect(output).To(BeEmpty())
	},
	// The sample names the store of make dev-store, whose Secret the test
	// namespace lacks: the backup waits for it, once the cluster's own
	// backup user exists, and never fails or starts a Job.
	"RedisClusterBackup": func(_ *testing.T, g Gomega, ns, name string) {
		g.Eventually(func() string {
			out, _ := run("get", "redisclusterbackup", "-n", ns, name, "-o", `jsonpath={.status.phase} {.status.conditions[?(@.type=="Ready")].reason}`)
			return out
		}, 90*time.Second).Should(Equal("Pending SecretNotFound"))
		out, _ := run("get", "jobs", "-n", ns, "-l", "app.kubernetes.io/instance="+name, "-o", "name")
		g.Expect(out).To(BeEmpty())
	},
	// The sample backs up nightly: it is Ready and says when next, and
	// has created no backup unless a tick came meanwhile.
	"RedisClusterBackupSchedule": func(t *testing.T, g Gomega, ns, name string) {
		kubectl(t, "wait", "--for=condition=Ready", "-n", ns, "redisclusterbackupschedule/"+name, "--timeout=90s")
		g.Expect(kubectl(t, "get", "redisclusterbackupschedule", "-n", ns, name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].reason}`)).To(Equal("Scheduled"))
		g.Expect(kubectl(t, "get", "redisclusterbackupschedule", "-n", ns, name, "-o", "jsonpath={.status.nextScheduleTime}")).NotTo(BeEmpty())
	},
	"RedisCluster": func(t *testing.T, g Gomega, ns, name string) {
		if realNode {
			kubectl(t, "wait", "--for=condition=Ready", "-n", ns, "rediscluster/"+name, "--timeout=180s")
			g.Expect(kubectl(t, "get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.status.clusterState}")).To(Equal("ok"))
			// Authentication is on: the generated password works, nothing else does.
			g.Expect(kubectl(t, "get", "rediscluster", "-n", ns, name, "-o", "jsonpath={.status.auth.secretName}")).To(Equal(name + "-auth"))
			g.Expect(redisClient(t, ns, name).Set(context.Background(), "sample", "ok", 0).Err()).To(Succeed())
			for ip, c := range nodeClients(t, ns, name, "", "") {
				g.Expect(c.Ping(context.Background()).Err()).To(MatchError(ContainSubstring("NOAUTH")), ip)
			}
			return
		}
		g.Eventually(func() string {
			out, _ := run("get", "pods", "-n", ns, "-l", "app.kubernetes.io/instance="+name, "-o", "jsonpath={.items[*].status.phase}")
			return out
		}).Should(And(ContainSubstring("Running"), Not(ContainSubstring("Pending"))), "the StatefulSet's pods run")
		// Simulated pods run no Redis: the status must say so, never claim Ready.
		g.Eventually(func() string {
			out, _ := run("get", "rediscluster", "-n", ns, name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="Ready")].message}`)
			return out
		}).Should(MatchRegexp(`^False .*(reach|connect)`))
		// Their addresses are loopback ones nobody listens on: the dial is
		// refused at once, and no stranger off this machine answers.
		g.Eventually(func() string {
			out, _ := run("events", "-n", ns, "--for", "rediscluster/"+name)
			return out
		}).Should(ContainSubstring("connection refused"), "the events say the simulated pods refuse connections")
		g.Expect(run("events", "-n", ns, "--for", "rediscluster/"+name)).NotTo(ContainSubstring("HTTP/1.1"), "nothing but our own cluster answers")
		g.Consistently(func() string {
			out, _ := run("get", "rediscluster", "-n", ns, name, "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
			return out
		}, 5*time.Second).Should(Equal("False"))
	},
}

// memcachedStats sends memcached's stats command to addr and returns the answer.
func memcachedStats(addr string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return "", err
	}
	defer conn.Close() //nolint:errcheck // read only
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		return "", err
	}
	if _, err := conn.Write([]byte("stats\r\n")); err != nil {
		return "", err
	}
	var out strings.Builder
	buf := make([]byte, 4096)
	for !strings.HasSuffix(out.String(), "END\r\n") {
		n, err := conn.Read(buf)
		out.Write(buf[:n])
		if err != nil {
			return out.String(), err
		}
	}
	return out.String(), nil
}

// TestSamples applies every file in samples/ with kubectl and waits for the
// state its kind promises; a new sample is covered without editing the test.
func TestSamples(t *testing.T) {
	ns := namespace(t)
	for _, s := range loadSamples(t) {
		t.Run(filepath.Base(s.file), func(t *testing.T) {
			g := NewWithT(t)
			expect, ok := expectations[s.kind]
			if !ok {
				t.Fatalf("no expectation for kind %s: add one to the e2e suite", s.kind)
			}
			target := ns
			if s.namespace != "" {
				// The sample names its own namespace; it must apply unchanged.
				target = s.namespace
				// As kubectl apply -f samples/ does: the namespace's file
				// first, and no namespace made by hand.
				kubectl(t, "apply", "-f", namespaceFile(t, s))
				t.Cleanup(func() { _, _ = run("delete", "-f", s.file, "--wait=false", "--ignore-not-found") })
				kubectl(t, "apply", "-f", s.file)
			} else {
				kubectl(t, "apply", "-n", target, "-f", s.file)
			}
			expect(t, g, target, s.name)

			// kubectl get shows the CRD's printer columns; describe shows events.
			plural := kubectl(t, "get", "-n", target, "-f", s.file, "-o", "jsonpath={.kind}")
			g.Expect(plural).To(Equal(s.kind))
			// kubectl get -f shows the columns of the sample's own version.
			version := s.apiVersion[strings.LastIndex(s.apiVersion, "/")+1:]
			// Each column as name=priority; those of a priority above 0
			// show only with -o wide.
			columns := kubectl(t, "get", "crd", "-o", `jsonpath={range .items[?(@.spec.names.kind=="`+s.kind+`")]}{range .spec.versions[?(@.name=="`+version+`")].additionalPrinterColumns[*]}{.name}={.priority}{" "}{end}{end}`)
			header := strings.Split(kubectl(t, "get", "-n", target, "-f", s.file), "\n")[0]
			wide := strings.Split(kubectl(t, "get", "-n", target, "-f", s.file, "-o", "wide"), "\n")[0]
			for _, col := range strings.Fields(columns) {
				name, priority, _ := strings.Cut(col, "=")
				if priority == "" || priority == "0" {
					g.Expect(header).To(ContainSubstring(strings.ToUpper(name)))
				}
				g.Expect(wide).To(ContainSubstring(strings.ToUpper(name)))
			}
			g.Eventually(func() string {
				out, _ := run("describe", "-n", target, "-f", s.file)
				return out
			}).Should(MatchRegexp(`(?s)Events:\s+Type\s+Reason`), "describe lists events")
		})
	}
	// Every pod the samples made has an address on this machine.
	if err := checkAddresses(); err != nil {
		t.Error(err)
	}
}

// memcached applies a Memcached of size 2 and waits for it.
func memcached(t *testing.T, ns, name string) {
	manifest := `{"apiVersion":"cache.example.com/v1alpha1","kind":"Memcached","metadata":{"name":"` + name + `","namespace":"` + ns + `"},"spec":{"size":2}}`
	applyJSON(t, manifest)
	kubectl(t, "wait", "--for=condition=Available", "-n", ns, "memcached/"+name, "--timeout=90s")
}

func TestChildrenHealAndGoWithTheirOwner(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	memcached(t, ns, "heal")

	uid := kubectl(t, "get", "deployment", "-n", ns, "heal", "-o", "jsonpath={.metadata.uid}")
	kubectl(t, "delete", "deployment", "-n", ns, "heal", "--wait=false")
	g.Eventually(func() string {
		out, _ := run("get", "deployment", "-n", ns, "heal", "-o", "jsonpath={.metadata.uid}")
		return strings.TrimSpace(out)
	}).ShouldNot(BeElementOf("", uid), "a deleted Deployment comes back")

	kubectl(t, "scale", "deployment", "-n", ns, "heal", "--replicas=3")
	g.Eventually(func() string {
		out, _ := run("get", "deployment", "-n", ns, "heal", "-o", "jsonpath={.spec.replicas}")
		return strings.TrimSpace(out)
	}).Should(Equal("2"), "a hand-scaled Deployment is restored")

	kubectl(t, "delete", "memcached", "-n", ns, "heal", "--wait=true", "--timeout=60s")
	g.Eventually(func() string {
		out, _ := run("get", "deployments,services,pods", "-n", ns, "-l", "app.kubernetes.io/instance=heal", "-o", "name")
		return strings.TrimSpace(out)
	}).Should(BeEmpty(), "the garbage collector removes the children")
}

func TestManagerCrashConvergesWithoutDuplicates(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	leader.Kill()
	// Work piles up while no manager runs, then a new one starts mid-way.
	for i := range 5 {
		manifest := `{"apiVersion":"devsectim.io/v1alpha1","kind":"WhaleSay","metadata":{"name":"crash-` + strconv.Itoa(i) + `","namespace":"` + ns + `"},"spec":{"message":"crash ` + strconv.Itoa(i) + `"}}`
		applyJSON(t, manifest)
	}
	var err error
	leader, err = startManager("after-crash")
	g.Expect(err).NotTo(HaveOccurred())
	time.Sleep(500 * time.Millisecond)
	leader.Kill()
	leader, err = startManager("after-second-crash")
	g.Expect(err).NotTo(HaveOccurred())

	for i := range 5 {
		kubectl(t, "wait", "--for=condition=Ready", "-n", ns, "whalesay/crash-"+strconv.Itoa(i), "--timeout=120s")
	}
	var jobs struct {
		Items []struct {
			Metadata struct {
				Labels map[string]string `json:"labels"`
			} `json:"metadata"`
		} `json:"items"`
	}
	g.Expect(json.Unmarshal([]byte(kubectl(t, "get", "jobs", "-n", ns, "-o", "json")), &jobs)).To(Succeed())
	perOwner := map[string]int{}
	for _, j := range jobs.Items {
		perOwner[j.Metadata.Labels["app.kubernetes.io/instance"]]++
	}
	g.Expect(perOwner).To(HaveLen(5))
	for owner, n := range perOwner {
		g.Expect(n).To(Equal(1), "one Job for %s", owner)
	}
}

func TestLeaderElectionFailover(t *testing.T) {
	g := NewWithT(t)
	ns := namespace(t)
	g.Eventually(leaseHolder).ShouldNot(BeEmpty())
	first := leaseHolder()

	standby, err := startManager("standby")
	g.Expect(err).NotTo(HaveOccurred())
	defer func() {
		if standby != nil {
			standby.Stop()
		}
	}()
	g.Consistently(leaseHolder, 3*time.Second).Should(Equal(first), "the standby does not take over a live leader")

	killed := time.Now()
	leader.Kill()
	g.Eventually(leaseHolder, 40*time.Second).ShouldNot(Equal(first))
	took := time.Since(killed)
	// The standby leads now: it stays the suite's manager even if the
	// timing below fails, so that the tests after this one have one.
	leader, standby = standby, nil
	// The lease (15s) runs out at most 15s after the leader's last renewal,
	// before the kill. The standby then tries every retry period (2s) with
	// client-go's jitter of up to 1.2 periods, and this test polls kubectl
	// (allow 1s): 15 + 2*2.2 + 1 = 20.4s.
	const leaseDuration, retryPeriod = 15 * time.Second, 2 * time.Second
	g.Expect(took).To(BeNumerically("<", leaseDuration+retryPeriod*22/10+time.Second))

	// The new leader reconciles.
	memcached(t, ns, "after-failover")
}

// TestOverlaysPassServerValidation sends every overlay to the API server as
// a server-side dry run: each object is admitted as it would be on apply.
func TestOverlaysPassServerValidation(t *testing.T) {
	// A dry run creates no namespace; the overlays' objects need theirs.
	_, _ = run("create", "namespace", "multi-operator-system")
	t.Cleanup(func() { _, _ = run("delete", "namespace", "multi-operator-system", "--wait=true", "--timeout=60s") })
	dirs, _ := filepath.Glob(filepath.Join(root, "config", "overlays", "*"))
	for _, dir := range append(dirs, filepath.Join(root, "config", "default")) {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			out := kubectl(t, "apply", "--dry-run=server", "--server-side", "-k", dir)
			NewWithT(t).Expect(out).To(ContainSubstring("deployment.apps/multi-operator-controller-manager serverside-applied (server dry run)"))
		})
	}
}
