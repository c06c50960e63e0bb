package benchredis

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"testing"

	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
)

// pin runs the Redis nodes apart from the tools: a backup or restore Job
// runs on another node than the masters, so that its work does not take
// the masters' CPU, and redis-cli is measured the same way.
var pin = flag.Bool("pin", true, "on 2 or more CPUs, run the backup benchmark's Redis nodes on CPU 0 and the test process (the tools, redis-cli, the store) on the others")

// pinned says whether the processes are pinned: -pin on 2 or more CPUs.
func pinned() bool { return *pin && runtime.NumCPU() >= 2 }

// pinSelf pins every thread of the test process, and so the processes it
// starts afterwards, to the CPUs other than 0.
func pinSelf(t *testing.T) {
	t.Helper()
	if pinned() {
		taskset(t, fmt.Sprintf("1-%d", runtime.NumCPU()-1), os.Getpid())
	}
}

// startCluster starts a cluster of masters for the backup benchmark, its
// nodes pinned to CPU 0 (their forks inherit it).
func startCluster(t *testing.T, masters int) *backuptest.Cluster {
	t.Helper()
	c := backuptest.Start(t, masters)
	if pinned() {
		for _, s := range c.Servers {
			taskset(t, "0", s.PID())
		}
	}
	return c
}

// taskset pins every thread of process pid to cpus.
func taskset(t *testing.T, cpus string, pid int) {
	t.Helper()
	if out, err := exec.Command("taskset", "-a", "-p", "-c", cpus, strconv.Itoa(pid)).CombinedOutput(); err != nil {
		t.Fatalf("taskset -c %s %d: %v: %s", cpus, pid, err, out)
	}
}
