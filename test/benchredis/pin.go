package benchredis

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/multi-operator/multi-operator/pkg/redisbackup/backuptest"
)

// pin runs the Redis nodes apart from the tools: a backup or restore Job
// may run on another node than the masters, where its work does not take
// theirs, and redis-cli is measured the same way.
var pin = flag.Bool("pin", true, "with 2 or more CPUs to run on, run the backup benchmark's Redis nodes on the first of them and the test process (the tools, redis-cli, the store) on the others")

// cpus are the CPUs this process may run on, in order.
func cpus(t *testing.T) []int {
	t.Helper()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatalf("reading the CPUs this process may run on: %v", err)
	}
	var out []int
	for cpu := 0; len(out) < set.Count(); cpu++ {
		if set.IsSet(cpu) {
			out = append(out, cpu)
		}
	}
	return out
}

// placement is where pinned processes run: the Redis nodes on Nodes, the
// test process and what it starts on Tools; both empty when not pinned.
type placement struct {
	Nodes, Tools string
	all          string
}

// pinSelf pins every thread of the test process, and so the processes it
// starts afterwards, to every CPU it may run on but the first, which the
// Redis nodes get; the test's end gives the process all of them back, so
// that the benchmarks after it run as before.
func pinSelf(t *testing.T) placement {
	t.Helper()
	all := cpus(t)
	if !*pin || len(all) < 2 {
		return placement{}
	}
	p := placement{Nodes: strconv.Itoa(all[0]), Tools: cpuList(all[1:]), all: cpuList(all)}
	taskset(t, p.Tools, os.Getpid())
	t.Cleanup(func() { taskset(t, p.all, os.Getpid()) })
	return p
}

// startCluster starts a cluster of masters for the backup benchmark, its
// nodes pinned to p.Nodes (their forks inherit it).
func startCluster(t *testing.T, p placement, masters int) *backuptest.Cluster {
	t.Helper()
	c := backuptest.Start(t, masters)
	if p.Nodes != "" {
		for _, s := range c.Servers {
			taskset(t, p.Nodes, s.PID())
		}
	}
	return c
}

// cpuList is cpus as taskset's -c takes them.
func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}

// taskset pins every thread of process pid to the CPUs of list.
func taskset(t *testing.T, list string, pid int) {
	t.Helper()
	if out, err := exec.Command("taskset", "-a", "-p", "-c", list, strconv.Itoa(pid)).CombinedOutput(); err != nil {
		t.Fatalf("taskset -c %s %d: %v: %s", list, pid, err, out)
	}
}

// String says where the processes ran, for the results.
func (p placement) String() string {
	if p.Nodes == "" {
		return "the Redis nodes and the tools shared every CPU"
	}
	tools := "CPU " + p.Tools
	if strings.Contains(p.Tools, ",") {
		tools = "CPUs " + p.Tools
	}
	return fmt.Sprintf("the Redis nodes ran on CPU %s, the tools and the store on %s", p.Nodes, tools)
}
