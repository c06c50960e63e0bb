package redisadmin

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/redis/go-redis/v9"
)

// CanaryUser is the ACL user of the write canary, which writes one small
// key per shard and reads it back to tell whether acknowledged writes
// survive failovers and restarts.
const CanaryUser = "canary"

// CanaryKeyPrefix begins every key the canary writes. Its user may touch no
// other key, and clients must not use keys with this prefix.
const CanaryKeyPrefix = "multi-operator:canary:"

// canaryRules are CanaryUser's permissions: its own keys only, and the
// commands of a probe. CLUSTER SLOTS tells it which master serves which
// slots; it shows node addresses and IDs only.
var canaryRules = []string{
	"resetkeys", "~" + CanaryKeyPrefix + "*", "resetchannels", "-@all",
	"+get", "+set", "+wait", "+ping", "+cluster|slots",
}

// forbiddenToCanary are commands CanaryUser must not be allowed: if a node
// allows one, the user was widened, and ReconcileAccess resets it.
var forbiddenToCanary = [][]any{{"GET", "x"}, {"SET", "x", "1"}, {"FLUSHALL"}, {"CONFIG", "GET", "masterauth"}}

var canaryServiceUser = serviceUser{
	name: CanaryUser, rules: canaryRules, forbidden: forbiddenToCanary,
	created: ReasonCanaryUserCreated, reset: ReasonCanaryUserReset, deleted: ReasonCanaryUserDeleted, what: "the write canary's",
}

// KeySlot is the slot of key, as Redis Cluster computes it: CRC16 of the
// key's hash tag (the text between its first '{' and the next '}', when
// not empty) or of the whole key, modulo NumSlots.
func KeySlot(key string) int {
	return int(crc16(hashTag(key))) % NumSlots
}

// KeySlotOf is KeySlot of a key held as bytes, without copying it into a
// string: a backup and a restore compute it for every key.
func KeySlotOf(key []byte) int {
	return int(crc16(hashTag(unsafe.String(unsafe.SliceData(key), len(key))))) % NumSlots
}

// hashTag is what of key its slot is computed from. Most keys are short,
// and a loop over them is cheaper than strings.IndexByte's set-up.
func hashTag(key string) string {
	for open := 0; open < len(key); open++ {
		if key[open] != '{' {
			continue
		}
		for end := open + 1; end < len(key); end++ {
			if key[end] == '}' {
				if end == open+1 {
					return key
				}
				return key[open+1 : end]
			}
		}
		return key
	}
	return key
}

// crc16 is CRC-16/XMODEM, Redis Cluster's key hash, a byte at a time from
// a table: a backup and a restore hash every key.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc = crc<<8 ^ crc16Table[byte(crc>>8)^s[i]]
	}
	return crc
}

// crc16Table is the CRC of each byte value, shifted in bit by bit.
var crc16Table = func() (t [256]uint16) {
	for b := range t {
		crc := uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
		t[b] = crc
	}
	return t
}()

// slotTags holds, for each slot, the shortest base-36 number whose hash is
// that slot, found once.
var slotTags = sync.OnceValue(func() []string {
	tags := make([]string, NumSlots)
	for found, i := 0, int64(0); found < NumSlots; i++ {
		tag := strconv.FormatInt(i, 36)
		if slot := int(crc16(tag)) % NumSlots; tags[slot] == "" {
			tags[slot] = tag
			found++
		}
	}
	return tags
})

// CanaryKey is the canary's key in slot: the prefix and a hash tag that
// lands there.
func CanaryKey(slot int) string {
	return CanaryKeyPrefix + HashTag(slot)
}

// HashTag is a short hash tag, braces included, that puts any key holding
// it in slot.
func HashTag(slot int) string {
	return "{" + slotTags()[slot] + "}"
}

// CanaryValue is what the canary writes: its epoch, which is new at every
// start, and the write's sequence number.
func CanaryValue(epoch string, seq uint64) string {
	return epoch + ":" + strconv.FormatUint(seq, 10)
}

// parseCanaryValue splits a value CanaryValue made; ok is false for
// anything else.
func parseCanaryValue(v string) (epoch string, seq uint64, ok bool) {
	i := strings.LastIndexByte(v, ':')
	if i <= 0 {
		return "", 0, false
	}
	seq, err := strconv.ParseUint(v[i+1:], 10, 64)
	if err != nil {
		return "", 0, false
	}
	return v[:i], seq, true
}

// Lineage is what the canary knows of one key: its writes up to LastAcked
// were acknowledged by the replicas it asked for, and those up to Floor
// are accounted for (written before the canary began to track the key, or
// already counted or seen).
type Lineage struct {
	LastAcked, Floor uint64
}

// Check compares what a read of the key found (present, value) with the
// lineage and returns the acknowledged writes lost, and the lineage after
// it. A missing key, or a value of this epoch below LastAcked, lost the
// acknowledged writes after what it holds; each is counted once. A value
// of another epoch (another canary's, such as a leader that has not
// stopped yet) or not the canary's tells nothing: the lineage restarts.
func (l Lineage) Check(epoch string, present bool, value string) (lost uint64, next Lineage, tracking bool) {
	if !present {
		return l.LastAcked - l.Floor, Lineage{LastAcked: l.LastAcked, Floor: l.LastAcked}, true
	}
	e, seq, ok := parseCanaryValue(value)
	if !ok || e != epoch {
		return 0, Lineage{}, false
	}
	if seq >= l.LastAcked {
		return 0, l, true
	}
	return l.LastAcked - max(seq, l.Floor), Lineage{LastAcked: l.LastAcked, Floor: l.LastAcked}, true
}

// CanaryOptions configure a Canary.
type CanaryOptions struct {
	// Password is CanaryUser's.
	Password string
	// TLSRootCAs, when set, makes the canary speak TLS, as Options'.
	TLSRootCAs *x509.CertPool
	// Timeout bounds each command and the connection before it; a WAIT
	// waits half of it for the replicas.
	Timeout time.Duration
	// Parallel is how many shards are probed at once; 4 when zero.
	Parallel int
}

// CanaryTarget is the cluster a probe writes to.
type CanaryTarget struct {
	// Shards lists each shard's node addresses (host:port), as the
	// operator knows them. Which of them is the master is read from the
	// nodes at each probe.
	Shards [][]string
	// Replicas is how many replicas must confirm a write (WAIT) before it
	// counts as acknowledged: 0 for shards without replicas.
	Replicas int
}

// ShardProbe is what one probe found on one shard.
type ShardProbe struct {
	// Lost is how many acknowledged writes the read found lost.
	Lost uint64
	// Outage is the time writes failed, since the shard's last acknowledged
	// write or its last failed probe.
	Outage time.Duration
	// Acked says the probe's write was acknowledged.
	Acked bool
	// Idle says the shard serves no slot: nothing was written.
	Idle bool
	// Err is why the write failed, when it did.
	Err error
}

// canaryShard is a Canary's state of one shard.
type canaryShard struct {
	slot int // -1: none chosen
	// seq numbers the shard's writes.
	seq      uint64
	lineage  Lineage
	tracking bool
	// mark is when the shard's last probe ended in an acknowledged write or
	// a counted outage.
	mark time.Time
}

// Canary writes to one cluster's shards and reads its writes back. Its
// Probe is not safe for concurrent use: one probe at a time per cluster.
type Canary struct {
	opts   CanaryOptions
	admin  *Admin
	epoch  string
	shards []canaryShard
	// clients are the connections to the nodes, by address, kept between
	// probes; a probe closes those it no longer needs.
	clients map[string]*redis.Client
}

// NewCanary returns a Canary with a new epoch, so that the values an
// earlier canary wrote are never taken for its own.
func NewCanary(opts CanaryOptions) *Canary {
	if opts.Timeout <= 0 {
		opts.Timeout = time.Second
	}
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return &Canary{
		opts:    opts,
		admin:   New(nil, Options{Username: CanaryUser, Password: opts.Password, TLSRootCAs: opts.TLSRootCAs, DialTimeout: opts.Timeout}),
		epoch:   hex.EncodeToString(b),
		clients: map[string]*redis.Client{},
	}
}

// Close closes every connection.
func (c *Canary) Close() {
	for addr, cl := range c.clients {
		_ = cl.Close()
		delete(c.clients, addr)
	}
}

func (c *Canary) client(addr string) *redis.Client {
	cl, ok := c.clients[addr]
	if !ok {
		cl = c.admin.dial(addr)
		c.clients[addr] = cl
	}
	return cl
}

// call runs f with the per-command timeout.
func (c *Canary) call(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.opts.Timeout)
	defer cancel()
	return f(ctx)
}

// slotRange is a range of slots and the address of its master.
type slotRange struct {
	start, end int
	master     string
}

// slotMap reads CLUSTER SLOTS from the first node of t that answers,
// trying at most maxSlotMapTries of them.
func (c *Canary) slotMap(ctx context.Context, t CanaryTarget) ([]slotRange, error) {
	const maxSlotMapTries = 3
	var lastErr error
	tries := 0
	for _, shard := range t.Shards {
		for _, addr := range shard {
			if tries == maxSlotMapTries || ctx.Err() != nil {
				return nil, errors.Join(lastErr, ctx.Err())
			}
			tries++
			var slots []redis.ClusterSlot
			lastErr = c.call(ctx, func(ctx context.Context) (err error) {
				// CLUSTER SHARDS replaces it from Redis 7 on; a spec's image
				// may run an older Redis.
				slots, err = c.client(addr).ClusterSlots(ctx).Result() //nolint:staticcheck // see above
				return err
			})
			if lastErr != nil {
				continue
			}
			out := make([]slotRange, 0, min(len(slots), NumSlots))
			for _, s := range slots {
				if len(out) == NumSlots {
					break // more ranges than slots: a node that lies
				}
				if len(s.Nodes) == 0 || s.Start < 0 || s.End >= NumSlots || s.Start > s.End {
					continue
				}
				out = append(out, slotRange{start: s.Start, end: s.End, master: s.Nodes[0].Addr})
			}
			return out, nil
		}
	}
	if lastErr == nil {
		lastErr = errors.New("no node to ask for the slot map")
	}
	return nil, lastErr
}

// Probe writes once to every shard of t and reads back what the previous
// probe wrote, at now. Every command is bounded by the options' Timeout,
// and the whole probe by ctx.
func (c *Canary) Probe(ctx context.Context, now time.Time, t CanaryTarget) []ShardProbe {
	if len(c.shards) != len(t.Shards) {
		grown := make([]canaryShard, len(t.Shards))
		for i := range grown {
			if i < len(c.shards) {
				grown[i] = c.shards[i]
			} else {
				grown[i] = canaryShard{slot: -1, mark: now}
			}
		}
		c.shards = grown
	}
	out := make([]ShardProbe, len(t.Shards))
	ranges, err := c.slotMap(ctx, t)
	if err != nil {
		for i := range out {
			out[i] = c.shards[i].failed(now, fmt.Errorf("reading the slot map: %w", err))
		}
		return out
	}
	masters := make([]string, len(t.Shards))
	used := map[string]bool{}
	for _, shard := range t.Shards {
		for _, addr := range shard {
			used[addr] = true
		}
	}
	unknown := make([]error, len(t.Shards))
	for i := range t.Shards {
		masters[i], unknown[i] = c.chooseSlot(&c.shards[i], i, t.Shards, ranges)
		if masters[i] != "" {
			c.client(masters[i])
			used[masters[i]] = true
		}
	}
	for addr, cl := range c.clients {
		if !used[addr] {
			_ = cl.Close()
			delete(c.clients, addr)
		}
	}
	eachParallel(len(t.Shards), c.opts.Parallel, func(i int) {
		if unknown[i] != nil {
			out[i] = c.shards[i].failed(now, unknown[i])
			return
		}
		if masters[i] == "" {
			c.shards[i].mark = now
			out[i] = ShardProbe{Idle: true}
			return
		}
		out[i] = c.probeShard(ctx, now, &c.shards[i], c.clients[masters[i]], t.Replicas)
	})
	return out
}

// errSlotUnknown is a shard's slot that no master of the cluster serves,
// as far as the slot map tells: a failover or a restart not yet known to
// the node asked. The shard's writes fail meanwhile; its lineage is kept.
var errSlotUnknown = errors.New("the slot map names no master of the cluster for the shard's key")

// chooseSlot keeps the shard's slot while the shard's master serves it.
// When another shard's master serves it (the slot moved), or the shard
// had none, it picks the shard's master's first slot, where the lineage
// starts again. It returns the master's address, "" when the shard serves
// no slot, or errSlotUnknown when the slot map names no master of the
// cluster (shards) for the shard's slot: the lineage stays, so that a
// loss behind a passing gap in the slot map is still found.
func (c *Canary) chooseSlot(s *canaryShard, i int, shards [][]string, ranges []slotRange) (string, error) {
	first, firstMaster := -1, ""
	for _, r := range ranges {
		if s.slot >= r.start && s.slot <= r.end {
			switch owner := slices.IndexFunc(shards, func(addrs []string) bool { return slices.Contains(addrs, r.master) }); owner {
			case i:
				return r.master, nil
			case -1:
				return "", errSlotUnknown
			}
		}
		if slices.Contains(shards[i], r.master) && (first < 0 || r.start < first) {
			first, firstMaster = r.start, r.master
		}
	}
	if s.slot >= 0 && !slices.ContainsFunc(ranges, func(r slotRange) bool { return s.slot >= r.start && s.slot <= r.end }) {
		return "", errSlotUnknown
	}
	s.slot, s.lineage, s.tracking = first, Lineage{}, false
	return firstMaster, nil
}

// failed records a failed write at now: the time since the shard's mark
// is outage.
func (s *canaryShard) failed(now time.Time, err error) ShardProbe {
	outage := max(now.Sub(s.mark), 0)
	s.mark = now
	return ShardProbe{Outage: outage, Err: err}
}

// probeShard reads the shard's key, compares it with the lineage, then
// writes the next number and waits for replicas to confirm it.
func (c *Canary) probeShard(ctx context.Context, now time.Time, s *canaryShard, cl *redis.Client, replicas int) ShardProbe {
	key := CanaryKey(s.slot)
	s.seq++
	seq := s.seq
	var res ShardProbe
	var value string
	err := c.call(ctx, func(ctx context.Context) (err error) {
		value, err = cl.Get(ctx, key).Result()
		return err
	})
	present := err == nil
	if err != nil && !errors.Is(err, redis.Nil) {
		return s.failed(now, fmt.Errorf("GET: %w", err))
	}
	if s.tracking {
		res.Lost, s.lineage, s.tracking = s.lineage.Check(c.epoch, present, value)
	}
	var acked int64
	err = c.call(ctx, func(ctx context.Context) error {
		pipe := cl.Pipeline()
		set := pipe.Set(ctx, key, CanaryValue(c.epoch, seq), 0)
		wait := redis.NewIntCmd(ctx, "WAIT", replicas, max((c.opts.Timeout/2).Milliseconds(), 1))
		_ = pipe.Process(ctx, wait)
		_, err := pipe.Exec(ctx)
		if err := set.Err(); err != nil {
			return fmt.Errorf("SET: %w", err)
		}
		if err != nil {
			return fmt.Errorf("WAIT: %w", err)
		}
		acked = wait.Val()
		return nil
	})
	if err == nil && acked < int64(replicas) {
		err = fmt.Errorf("%d of %d replicas confirmed the write in time", acked, replicas)
	}
	if err != nil {
		failed := s.failed(now, err)
		failed.Lost = res.Lost
		return failed
	}
	if !s.tracking {
		s.tracking, s.lineage = true, Lineage{Floor: seq - 1}
	}
	s.lineage.LastAcked = seq
	s.mark = now
	res.Acked = true
	return res
}
