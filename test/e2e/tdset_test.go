//go:build e2e

package e2e

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	. "github.com/onsi/gomega"
)

// applyExistingDeployment applies a Deployment the way a team already runs
// one, without any operator: a memcached server from the local image on the
// real node, under the restricted pod security standard, with the given
// replicas. It waits until every replica is available.
func applyExistingDeployment(t *testing.T, ns, name string, replicas int) {
	t.Helper()
	image := os.Getenv("MEMCACHED_IMAGE")
	if image == "" {
		t.Fatal("MEMCACHED_IMAGE is not set: run `make test-e2e`, which exports the local operand images")
	}
	manifest := fmt.Sprintf(`{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":%[1]q,"namespace":%[2]q,"labels":{"app":%[1]q}},"spec":{`+
		`"replicas":%[3]d,"selector":{"matchLabels":{"app":%[1]q}},"template":{"metadata":{"labels":{"app":%[1]q}},"spec":{`+
		`"automountServiceAccountToken":false,`+
		`"securityContext":{"runAsNonRoot":true,"runAsUser":65534,"seccompProfile":{"type":"RuntimeDefault"}},`+
		`"containers":[{"name":"memcached","image":%[4]q,"imagePullPolicy":"IfNotPresent","command":["memcached"],"args":["-p","11211","-m","16"],`+
		`"ports":[{"containerPort":11211}],"readinessProbe":{"tcpSocket":{"port":11211},"periodSeconds":2},`+
		`"resources":{"requests":{"cpu":"10m","memory":"32Mi"},"limits":{"memory":"32Mi"}},`+
		`"securityContext":{"allowPrivilegeEscalation":false,"readOnlyRootFilesystem":true,"capabilities":{"drop":["ALL"]}}}]}}}}`,
		name, ns, replicas, image)
	applyJSON(t, manifest)
	expectDeploymentAvailable(t, ns, name, replicas)
}

// expectDeploymentAvailable waits until the Deployment asks for replicas and
// has that many available, updated to its current template.
func expectDeploymentAvailable(t *testing.T, ns, name string, replicas int) {
	t.Helper()
	NewWithT(t).Eventually(func() string {
		out, _ := run("get", "deployment", "-n", ns, name, "-o",
			"jsonpath={.spec.replicas} {.status.availableReplicas} {.status.updatedReplicas}")
		return strings.TrimSpace(out)
	}, "2m", time.Second).Should(Equal(fmt.Sprintf("%d %d %d", replicas, replicas, replicas)),
		"Deployment %s/%s has %d replicas available", ns, name, replicas)
}

// applyWindowTDSet applies a TDSet that sets target (apiVersion, kind,
// name) to windowReplicas from start to end every day in UTC, and to
// defaultReplicas otherwise, with the given onDelete. It waits until the
// TDSet is Ready.
func applyWindowTDSet(t *testing.T, ns, name, apiVersion, kind, target, onDelete string, start, end time.Time, defaultReplicas, windowReplicas int) {
	t.Helper()
	manifest := fmt.Sprintf(`{"apiVersion":"schedule.rs/v2","kind":"TDSet","metadata":{"name":%q,"namespace":%q},"spec":{`+
		`"scaleTargetRef":{"apiVersion":%q,"kind":%q,"name":%q},"onDelete":%q,"timeZone":"UTC","defaultReplicas":%d,`+
		`"windows":[{"start":%q,"end":%q,"replicas":%d}]}}`,
		name, ns, apiVersion, kind, target, onDelete, defaultReplicas, start.Format("15:04"), end.Format("15:04"), windowReplicas)
	applyJSON(t, manifest)
	kubectl(t, "wait", "--for=condition=Ready", "-n", ns, "tdset/"+name, "--timeout=60s")
}

// templateOf is the Deployment's pod template as JSON, to check that a
// TDSet changed only its replica count.
func templateOf(t *testing.T, ns, name string) string {
	t.Helper()
	return kubectl(t, "get", "deployment", "-n", ns, name, "-o", "jsonpath={.spec.template}")
}
