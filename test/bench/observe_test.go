//go:build bench

package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// cpuSecondsOf is the user plus system CPU time process pid has used.
func cpuSecondsOf(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name in parentheses may hold spaces: split after it.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	// fields[0] is the state (field 3 of stat); utime and stime are fields 14 and 15.
	utime, err1 := strconv.ParseFloat(fields[11], 64)
	stime, err2 := strconv.ParseFloat(fields[12], 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("parsing /proc/%d/stat", pid)
	}
	return (utime + stime) / clockTicks, nil
}

// clockTicks is USER_HZ, 100 on every Linux architecture Go supports.
const clockTicks = 100

// clusterProcesses are the processes that share the machine's cores during
// a run, by their /proc comm (cut to 15 characters by the kernel).
var clusterProcesses = map[string]string{
	"etcd":            "etcd",
	"kube-apiserver":  "kube-apiserver",
	"kube-controller": "kube-controller-manager",
	"kube-scheduler":  "kube-scheduler",
	"kwok":            "kwok",
	"kwok-controller": "kwok",
	"manager":         "manager",
}

// machineCPU is the CPU seconds each cluster process and the benchmark
// itself have used so far.
func machineCPU() map[string]float64 { return machineCPUWith(0) }

// machineCPUWith is machineCPU with process operator, if above 0, counted
// as "operator" whatever its binary is called (the tutorial's operator is
// not one of clusterProcesses).
func machineCPUWith(operator int) map[string]float64 {
	out := map[string]float64{}
	dirs, _ := os.ReadDir("/proc")
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		comm, err := os.ReadFile(filepath.Join("/proc", d.Name(), "comm"))
		if err != nil {
			continue
		}
		name, ok := clusterProcesses[strings.TrimSpace(string(comm))]
		switch pid {
		case os.Getpid():
			name, ok = "benchmark", true
		case operator:
			name, ok = "operator", true
		}
		if !ok {
			continue
		}
		if s, err := cpuSecondsOf(pid); err == nil {
			out[name] += s
		}
	}
	return out
}

// cpuShares says what share of the machine's cores each process took
// between two machineCPU readings wall apart, the largest first.
func cpuShares(before, after map[string]float64, wall time.Duration, cores int) string {
	total := wall.Seconds() * float64(cores)
	type share struct {
		name string
		secs float64
	}
	var shares []share
	used := 0.0
	for name, s := range after {
		d := s - before[name] // a process started in between counts from 0
		used += d
		shares = append(shares, share{name, d})
	}
	slices.SortFunc(shares, func(a, b share) int { return int((b.secs - a.secs) * 1000) })
	parts := make([]string, 0, len(shares)+1)
	for _, s := range shares {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", s.name, 100*s.secs/total))
	}
	// Clock ticks are 10 ms: over a short window the sum may pass 100%.
	parts = append(parts, fmt.Sprintf("idle or other %.0f%%", max(0, 100*(total-used)/total)))
	return strings.Join(parts, ", ")
}

// resumableWatch watches from resourceVersion rv on and resumes where it
// broke off: the API server may close a watch that falls behind while a
// thousand objects change at once. It ends only with ctx, or when the API
// server no longer has the events to resume from (410 Gone).
func (b *bench) resumableWatch(ctx context.Context, rv string, watchFunc func(context.Context, metav1.ListOptions) (watch.Interface, error)) watch.Interface {
	b.t.Helper()
	w, err := watchtools.NewRetryWatcherWithContext(ctx, rv, &cache.ListWatch{WatchFuncWithContext: watchFunc})
	b.must(err)
	return w
}

// firstSeen records, from a watch, when each object of one resource was
// first seen at all and first seen in a state, keyed by a UID the caller
// picks from the object.
type firstSeen struct {
	mu      sync.Mutex
	seen    map[types.UID]time.Time
	matched map[types.UID]time.Time
	// modified counts every Modified event: one per write that changed an
	// object, none for a write that did not.
	modified atomic.Int64
	// ended is closed when the watch ends before its context: the API
	// server no longer had the events to resume from (410 Gone).
	ended chan struct{}
}

// broken reports whether the watch ended early, so that counts are partial.
func (f *firstSeen) broken() bool {
	select {
	case <-f.ended:
		return true
	default:
		return false
	}
}

// counts is how many keys have been seen, and seen in the state.
func (f *firstSeen) counts() (seen, matched int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.seen), len(f.matched)
}

// lastSeen is when the last key was first seen.
func (f *firstSeen) lastSeen() time.Time { return f.latest(f.seen) }

// lastMatched is when the last key was first seen in the state.
func (f *firstSeen) lastMatched() time.Time { return f.latest(f.matched) }

// latest is the latest time in at, one of f's maps.
func (f *firstSeen) latest(at map[types.UID]time.Time) time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	var last time.Time
	for _, t := range at {
		if t.After(last) {
			last = t
		}
	}
	return last
}

// watchFirst watches resource in ns from now on and records when each
// object is first seen, and first seen with match true; key names the
// object the record is for (the object itself, or its controller). It
// stops with ctx.
func (b *bench) watchFirst(ctx context.Context, resource schema.GroupVersionResource, ns string,
	match func(*unstructured.Unstructured) bool, key func(*unstructured.Unstructured) (types.UID, bool)) *firstSeen {
	b.t.Helper()
	dc, err := dynamic.NewForConfig(b.cfg)
	b.must(err)
	ri := dc.Resource(resource).Namespace(ns)
	list, err := ri.List(ctx, metav1.ListOptions{Limit: 1})
	b.must(err)
	w := b.resumableWatch(ctx, list.GetResourceVersion(), ri.Watch)
	f := &firstSeen{seen: map[types.UID]time.Time{}, matched: map[types.UID]time.Time{}, ended: make(chan struct{})}
	record := func(at map[types.UID]time.Time, id types.UID, now time.Time) {
		if _, dup := at[id]; !dup {
			at[id] = now
		}
	}
	go func() {
		defer w.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.ResultChan():
				if !ok {
					close(f.ended)
					return
				}
				if ev.Type == watch.Modified {
					f.modified.Add(1)
				}
				u, isU := ev.Object.(*unstructured.Unstructured)
				if !isU || (ev.Type != watch.Added && ev.Type != watch.Modified) {
					continue
				}
				id, ok := key(u)
				if !ok {
					continue
				}
				now := time.Now()
				f.mu.Lock()
				record(f.seen, id, now)
				if match(u) {
					record(f.matched, id, now)
				}
				f.mu.Unlock()
			}
		}
	}()
	return f
}

// lags is, for every key both have seen, the time from first to second.
func lags(first, second *firstSeen) []time.Duration {
	first.mu.Lock()
	defer first.mu.Unlock()
	second.mu.Lock()
	defer second.mu.Unlock()
	var out []time.Duration
	for id, a := range first.matched {
		if b, ok := second.matched[id]; ok {
			out = append(out, b.Sub(a))
		}
	}
	slices.Sort(out)
	return out
}

// ownUID keys an object by its own UID.
func ownUID(u *unstructured.Unstructured) (types.UID, bool) { return u.GetUID(), true }

// controllerUID keys an object by the UID of its controller.
func controllerUID(u *unstructured.Unstructured) (types.UID, bool) {
	if ref := metav1.GetControllerOfNoCopy(u); ref != nil {
		return ref.UID, true
	}
	return "", false
}
