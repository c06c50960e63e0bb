package redisadmin

import (
	"cmp"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"
)

// BackupUser is the ACL user a backup logs in as: it takes each shard's
// snapshot over the replication protocol, which the operator's own user
// may not run, and reads no key.
const BackupUser = "backup"

// backupRules are BackupUser's permissions: what BackupSources sends
// (CLUSTER NODES for the shards, INFO replication to skip a replica that
// lags) and what pkg/redissnapshot sends (REPLCONF capa, PSYNC, or SYNC on
// a node without PSYNC). A snapshot holds every key, so whoever has this
// password may read the data, as with the clients' password; but the user
// cannot write, run a data command, read a setting or change a user.
var backupRules = []string{
	"resetkeys", "resetchannels", "-@all",
	"+ping", "+info", "+cluster|nodes", "+replconf", "+psync", "+sync",
}

// forbiddenToBackup are commands BackupUser must not be allowed: if a node
// allows one, the user was widened, and ReconcileAccess resets it.
var forbiddenToBackup = [][]any{{"GET", "x"}, {"SET", "x", "1"}, {"FLUSHALL"}, {"CONFIG", "GET", "masterauth"}, {"ACL", "SETUSER", BackupUser}}

var backupServiceUser = serviceUser{
	name: BackupUser, rules: backupRules, forbidden: forbiddenToBackup,
	created: ReasonBackupUserCreated, reset: ReasonBackupUserReset, deleted: ReasonBackupUserDeleted, what: "the backups'",
}

// BackupShard is one shard as a backup takes it.
type BackupShard struct {
	// Slots are the slots its master serves.
	Slots []SlotRange
	// Nodes are the addresses to take the snapshot from, in order:
	// the replicas that are connected to the master and not syncing, then
	// the master.
	Nodes []string
}

// BackupSourceOptions configure BackupSources.
type BackupSourceOptions struct {
	// Password is BackupUser's.
	Password string
	// TLSRootCAs, when set, makes the connections speak TLS, verifying the
	// nodes' chains (not their host names).
	TLSRootCAs *x509.CertPool
	// ClientPort, when not 0, is the port every node serves clients on,
	// used instead of the port a node announces: with a TLS bus, nodes
	// announce their TLS port, which requires a client certificate.
	ClientPort int
	// Timeout bounds each command and the connection before it; 10s when 0.
	Timeout time.Duration
}

// ErrMigrating is why BackupSources refuses a cluster whose slots are
// migrating: a backup then could miss keys or hold some twice.
var ErrMigrating = errors.New("slots are migrating; try again once the cluster is stable")

// maxSeedTries bounds how many seeds BackupSources asks for CLUSTER NODES.
const maxSeedTries = 3

// BackupSources reads the cluster's shards from the first of seeds that
// answers, as BackupUser: each master that serves slots, sorted by its
// first slot, with the nodes a snapshot may come from. It fails when a
// slot is not served, a master is failing, or a slot is migrating: a
// backup of such a cluster would miss keys or hold a key twice.
func BackupSources(ctx context.Context, seeds []string, opts BackupSourceOptions) ([]BackupShard, error) {
	opts.Timeout = cmp.Or(opts.Timeout, 10*time.Second)
	a := New(nil, Options{Username: BackupUser, Password: opts.Password, TLSRootCAs: opts.TLSRootCAs, DialTimeout: opts.Timeout, MigrateTimeout: opts.Timeout})
	var errs []error
	for i, seed := range seeds {
		if i == maxSeedTries || ctx.Err() != nil {
			break
		}
		peers, err := backupPeers(ctx, a, seed, opts.Timeout)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", seed, err))
			continue
		}
		return backupShards(ctx, a, peers, seed, opts)
	}
	if len(errs) == 0 {
		return nil, errors.Join(errors.New("no node to ask for the cluster's shards"), ctx.Err())
	}
	return nil, errors.Join(errs...)
}

// backupPeers reads CLUSTER NODES from addr.
func backupPeers(ctx context.Context, a *Admin, addr string, timeout time.Duration) ([]Peer, error) {
	c := a.dial(addr)
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	text, err := c.ClusterNodes(ctx).Result()
	if err != nil {
		return nil, err
	}
	return parseNodes(text)
}

// backupShards groups peers into shards, checking that every slot is
// served once by a master that is not failing.
func backupShards(ctx context.Context, a *Admin, peers []Peer, seed string, opts BackupSourceOptions) ([]BackupShard, error) {
	served := 0
	var masters []Peer
	for _, p := range peers {
		if len(p.Migrating) > 0 || len(p.Importing) > 0 {
			return nil, fmt.Errorf("node %s: %w", p.ID, ErrMigrating)
		}
		if !p.IsMaster() || len(p.Slots) == 0 {
			continue
		}
		if p.Failed() {
			return nil, fmt.Errorf("the master %s of slots %d-%d is failing", p.ID, p.Slots[0], p.Slots[len(p.Slots)-1])
		}
		served += len(p.Slots)
		masters = append(masters, p)
	}
	if served != NumSlots {
		return nil, fmt.Errorf("the masters serve %d of the %d slots: the cluster is not complete", served, NumSlots)
	}
	slices.SortFunc(masters, func(x, y Peer) int { return x.Slots[0] - y.Slots[0] })
	out := make([]BackupShard, 0, len(masters))
	for _, m := range masters {
		master, err := clientAddr(m, seed, opts.ClientPort)
		if err != nil {
			return nil, err
		}
		sh := BackupShard{Slots: ranges(m.Slots)}
		for _, p := range peers {
			if p.MasterID != m.ID || p.Failed() {
				continue
			}
			addr, err := clientAddr(p, seed, opts.ClientPort)
			if err == nil && replicaInSync(ctx, a, addr, opts.Timeout) {
				sh.Nodes = append(sh.Nodes, addr)
			}
		}
		sh.Nodes = append(sh.Nodes, master)
		out = append(out, sh)
	}
	return out, nil
}

// clientAddr is where p serves clients: its announced host (seed's when
// it is the seed's own line without one) and port, or clientPort.
func clientAddr(p Peer, seed string, clientPort int) (string, error) {
	addr := p.Addr
	if addr == "" && p.Has("myself") {
		addr = seed
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return "", fmt.Errorf("node %s has no address", p.ID)
	}
	if clientPort > 0 {
		port = strconv.Itoa(clientPort)
	}
	return net.JoinHostPort(host, port), nil
}

// replicaInSync reports whether the replica at addr is connected to its
// master and not in a full resynchronization: its snapshot then holds
// what the master held a moment ago, not an older state.
func replicaInSync(ctx context.Context, a *Admin, addr string, timeout time.Duration) bool {
	c := a.dial(addr)
	defer func() { _ = c.Close() }()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	text, err := c.Info(ctx, "replication").Result()
	if err != nil {
		return false
	}
	info := parseInfo(text)
	return info["role"] == "slave" && info["master_link_status"] == "up" && info["master_sync_in_progress"] == "0"
}
