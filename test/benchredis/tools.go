package benchredis

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Tool grows a Cluster from Before to After masters and shrinks it back,
// and says how much CPU time it used for it.
type Tool interface {
	// Name names the tool in the results.
	Name() string
	// Grow makes node-Before to node-(After-1) masters with their even
	// share of the slots and keys.
	Grow(ctx context.Context, c *Cluster) (Usage, error)
	// Shrink moves every slot and key of node-Before to node-(After-1)
	// back to the first Before nodes and removes them from the cluster.
	Shrink(ctx context.Context, c *Cluster) (Usage, error)
}

// Usage is what a tool used to scale: CPU time and peak memory.
type Usage struct {
	// CPU is user plus system time.
	CPU time.Duration
	// Memory is, for pkg/redisadmin, how much its process's Go heap grew
	// at most, and for redis-cli, its peak resident set size.
	Memory int64
}

// Ours scales with pkg/redisadmin, the way the RedisCluster controller
// does: Reconcile with the new topology until Done.
type Ours struct{}

// Name implements Tool.
func (Ours) Name() string { return "multi-operator" }

// Grow implements Tool.
func (Ours) Grow(ctx context.Context, c *Cluster) (Usage, error) {
	return selfUsage(func() error { return c.Converge(ctx, c.Topology(After)) })
}

// Shrink implements Tool.
func (Ours) Shrink(ctx context.Context, c *Cluster) (Usage, error) {
	return selfUsage(func() error { return c.Converge(ctx, c.Topology(Before, c.Names[Before:]...)) })
}

// RedisCLI scales with redis-cli --cluster: add-node and rebalance
// --cluster-use-empty-masters to grow, rebalance with weight 0 and
// del-node to shrink.
type RedisCLI struct {
	// Pipeline is --cluster-pipeline: how many keys one MIGRATE carries.
	Pipeline int
}

// Name implements Tool.
func (r RedisCLI) Name() string { return "redis-cli" }

// Grow implements Tool.
func (r RedisCLI) Grow(ctx context.Context, c *Cluster) (Usage, error) {
	var u Usage
	seed := c.Servers[0].Addr()
	for i, s := range c.Servers[Before:] {
		if err := runCLI(ctx, &u, "--cluster", "add-node", s.Addr(), seed); err != nil {
			return u, err
		}
		// add-node waits for the join, not for the gossip, and both the
		// next add-node and rebalance refuse to start while the nodes
		// disagree about who is in the cluster ("Nodes don't agree about
		// configuration!" failed a CI run).
		if err := c.waitKnown(ctx, Before+i+1); err != nil {
			return u, err
		}
	}
	err := runCLI(ctx, &u, "--cluster", "rebalance", seed, "--cluster-use-empty-masters",
		"--cluster-pipeline", strconv.Itoa(r.Pipeline))
	return u, err
}

// Shrink implements Tool.
func (r RedisCLI) Shrink(ctx context.Context, c *Cluster) (Usage, error) {
	var u Usage
	seed := c.Servers[0].Addr()
	ids, err := c.ids(ctx)
	if err != nil {
		return u, err
	}
	args := []string{"--cluster", "rebalance", seed, "--cluster-pipeline", strconv.Itoa(r.Pipeline), "--cluster-weight"}
	for _, id := range ids[Before:] {
		args = append(args, id+"=0")
	}
	if err := runCLI(ctx, &u, args...); err != nil {
		return u, err
	}
	for _, id := range ids[Before:] {
		if err := runCLI(ctx, &u, "--cluster", "del-node", seed, id); err != nil {
			return u, err
		}
	}
	return u, nil
}

// runCLI runs redis-cli with args and adds its CPU time and peak memory
// to u. --cluster-yes answers its questions.
func runCLI(ctx context.Context, u *Usage, args ...string) error {
	cmd := exec.CommandContext(ctx, "redis-cli", append(args, "--cluster-yes")...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			u.CPU += cpuTime(ru)
			u.Memory = max(u.Memory, ru.Maxrss*1024) // Linux reports KiB
		}
	}
	text := out.String()
	if err == nil && strings.Contains(text, "[ERR]") {
		err = fmt.Errorf("reported an error")
	}
	if err != nil {
		return fmt.Errorf("redis-cli %s: %w\n%s", strings.Join(args[:2], " "), err, tail(text, 2000))
	}
	return nil
}

// tail returns the last n bytes of s.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}
