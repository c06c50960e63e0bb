package redisadmin

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
)

// Resolver returns the host:port at which the named node accepts clients,
// joined by net.JoinHostPort so that an IPv6 host is bracketed. The host
// must be an IP address: CLUSTER MEET takes no host names.
type Resolver func(ctx context.Context, node string) (string, error)

// Topology is the cluster that Reconcile builds.
type Topology struct {
	// Shards lists the nodes of each shard. The first node is the preferred
	// master, the others are its replicas; a shard whose replica was
	// promoted by a failover keeps the promoted master.
	Shards [][]string
	// Leaving are nodes that still run but are to be removed: their slots
	// are moved to the shards' masters, then every other node forgets them.
	Leaving []string
	// KeepDrained keeps leaving nodes in the cluster once they are drained
	// instead of forgetting them: a client whose slot map is older than
	// the move still reaches one and is redirected (MOVED), where a node
	// already reset would answer CLUSTERDOWN. Result.LeavingDrained tells
	// when they are drained.
	KeepDrained bool
}

// Nodes returns every node of the topology, shards first.
func (t Topology) Nodes() []string {
	var out []string
	for _, s := range t.Shards {
		out = append(out, s...)
	}
	return append(out, t.Leaving...)
}

// Options tune an Admin. The zero value is usable.
type Options struct {
	// GossipTimeout bounds how long Reconcile waits for nodes to learn about
	// each other after CLUSTER MEET; 15s when zero.
	GossipTimeout time.Duration
	// MaxSlotsPerRun bounds the slots one Reconcile moves, so that a caller
	// can report progress between runs; no bound when zero.
	MaxSlotsPerRun int
	// SlotsPerBatch is how many slots move together from one node to
	// another: opened for migration at once, handed over with one pipeline
	// of SETSLOT NODE; 64 when zero. A batch costs a few round trips and,
	// for SETSLOT NODE, a config save with fsync on every master, so small
	// batches move slowly; large ones move no faster and leave more slots
	// answering ASK at once (docs/scale.md has the measurements).
	SlotsPerBatch int
	// KeysPerMigrate is how many keys one MIGRATE carries at most; 100 when
	// zero. A slot seldom holds more, so one MIGRATE usually empties it;
	// larger slots stream through in rounds of this many keys.
	KeysPerMigrate int
	// ParallelMoves is how many batches move at once, each between its own
	// source and destination; 4 when zero, 1 for one at a time. The
	// source/destination pairs of a rebalance bound it too: 3 -> 5 masters
	// has at most two disjoint pairs. Parallel moves shorten the rebalance
	// only: new nodes wait for cluster_state:ok either way.
	ParallelMoves int
	// MigrateBudget is how long a source node may spend on one window of
	// pipelined MIGRATEs, answering no other client meanwhile: the Admin
	// sizes its windows to take about this long, smaller when the node is
	// slow or busy, and lets the node rest between them (see MigrateRest);
	// 2ms when zero, no pacing (full windows back to back) when negative.
	// Smaller budgets keep clients' latency down during a reshard and move
	// keys more slowly.
	MigrateBudget time.Duration
	// MigrateRest is how long a source node rests between two windows of
	// MIGRATE, answering its clients, per unit of time the window before
	// took; 1 when zero (the node migrates half of the time at most), none
	// when negative.
	MigrateRest float64
	// MigrateTimeout is MIGRATE's timeout; 10s when zero.
	MigrateTimeout time.Duration
	// DialTimeout bounds connecting to a node; 3s when zero.
	DialTimeout time.Duration
	// RunTimeout bounds one run of Observe, Reconcile, ReconcileAccess,
	// InSyncReplicas or Failover, on top of the context's deadline; no
	// bound but the context's when zero. A run cut short resumes in the
	// next, as after any interruption.
	RunTimeout time.Duration
	// Username and Password authenticate the Admin to every node, and the
	// nodes to each other when MIGRATE carries keys. Without a password the
	// Admin connects as the default user with none.
	Username, Password string
	// TLSRootCAs, when set, makes the Admin speak TLS and accept a node's
	// certificate when it chains to one of these CAs. Like Redis between
	// its nodes, it checks no host name: nodes are reached at pod IPs,
	// which certificates seldom name.
	TLSRootCAs *x509.CertPool
	// ReplyLimits bound every reply read from a node;
	// DefaultReplyLimits when zero.
	ReplyLimits ReplyLimits
}

func (o Options) withDefaults() Options {
	if o.GossipTimeout == 0 {
		o.GossipTimeout = 15 * time.Second
	}
	if o.SlotsPerBatch == 0 {
		o.SlotsPerBatch = 64
	}
	if o.KeysPerMigrate == 0 {
		o.KeysPerMigrate = 100
	}
	if o.ParallelMoves == 0 {
		o.ParallelMoves = 4
	}
	if o.MigrateBudget == 0 {
		o.MigrateBudget = 2 * time.Millisecond
	}
	if o.MigrateRest == 0 {
		o.MigrateRest = 1
	}
	if o.MigrateTimeout == 0 {
		o.MigrateTimeout = 10 * time.Second
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = 3 * time.Second
	}
	if o.ReplyLimits == (ReplyLimits{}) {
		o.ReplyLimits = DefaultReplyLimits
	}
	return o
}

// Reason says what kind of change an Action made. It is a CamelCase word,
// so that a caller can use it as an event's reason.
type Reason string

// The reasons of the changes Reconcile makes to the cluster, then those of
// ReconcileAccess.
const (
	// ReasonNodeMet: a node was introduced to the others (CLUSTER MEET),
	// being new or at a new address.
	ReasonNodeMet Reason = "NodeMet"
	// ReasonNodeForgotten: the other nodes forgot a node, one that departed
	// or a leaving one that was drained.
	ReasonNodeForgotten Reason = "NodeForgotten"
	// ReasonNodeDetached: a replica of another shard was reset to become
	// the master of its own shard.
	ReasonNodeDetached Reason = "NodeDetached"
	// ReasonReplicaPromoted: a replica whose master is gone took over its
	// slots, since it held the only copy of their keys.
	ReasonReplicaPromoted Reason = "ReplicaPromoted"
	// ReasonReplicaAttached: a node was made a replica of its shard's master.
	ReasonReplicaAttached Reason = "ReplicaAttached"
	// ReasonSlotsAssigned: slots that no node served were given to a
	// master; whatever keys they held are gone (Result.SlotsAssigned).
	ReasonSlotsAssigned Reason = "SlotsAssigned"
	// ReasonSlotsMoved: slots moved with their keys from one master to
	// another (Result.SlotsMoved).
	ReasonSlotsMoved Reason = "SlotsMoved"
	// ReasonSlotMigrationFinished: a migration that an earlier run left
	// open between two nodes of the topology was completed.
	ReasonSlotMigrationFinished Reason = "SlotMigrationFinished"
	// ReasonSlotMigrationAborted: a migration that an earlier run left open
	// towards or from a departed node was given up, its slots made stable.
	ReasonSlotMigrationAborted Reason = "SlotMigrationAborted"

	// ReasonOperatorUserCreated: a node that predates OperatorUser got it.
	ReasonOperatorUserCreated Reason = "OperatorUserCreated"
	// ReasonOperatorUserReset: a node that refused OperatorUser's password,
	// which was lost and made anew, took the new one from the default
	// user, whose password the operator knows.
	ReasonOperatorUserReset Reason = "OperatorUserReset"
	// ReasonExporterUserCreated: a node got ExporterUser, which it lacked
	// (new exporter, or a node that predates it).
	ReasonExporterUserCreated Reason = "ExporterUserCreated"
	// ReasonExporterUserReset: a node's ExporterUser had another password
	// (its Secret was lost and made anew) or wider rules, and was reset.
	ReasonExporterUserReset Reason = "ExporterUserReset"
	// ReasonExporterUserDeleted: the exporter was disabled, and a node
	// dropped ExporterUser.
	ReasonExporterUserDeleted Reason = "ExporterUserDeleted"
	// ReasonCanaryUserCreated: a node got CanaryUser, which it lacked (the
	// write canary was enabled, or the node predates it).
	ReasonCanaryUserCreated Reason = "CanaryUserCreated"
	// ReasonCanaryUserReset: a node's CanaryUser had another password or
	// wider rules, and was reset.
	ReasonCanaryUserReset Reason = "CanaryUserReset"
	// ReasonCanaryUserDeleted: the write canary was disabled, and a node
	// dropped CanaryUser.
	ReasonCanaryUserDeleted Reason = "CanaryUserDeleted"
	// ReasonBackupUserCreated: a node got BackupUser, which it lacked (a
	// node that predates it).
	ReasonBackupUserCreated Reason = "BackupUserCreated"
	// ReasonBackupUserReset: a node's BackupUser had another password or
	// wider rules, and was reset.
	ReasonBackupUserReset Reason = "BackupUserReset"
	// ReasonBackupUserDeleted: a node dropped BackupUser, as Access asked
	// without a BackupPassword.
	ReasonBackupUserDeleted Reason = "BackupUserDeleted"
	// ReasonRestoreUserCreated: a node got RestoreUser, which it lacked
	// (its cluster is to restore a backup).
	ReasonRestoreUserCreated Reason = "RestoreUserCreated"
	// ReasonRestoreUserReset: a node's RestoreUser had another password or
	// wider rules, and was reset.
	ReasonRestoreUserReset Reason = "RestoreUserReset"
	// ReasonRestoreUserDeleted: a node dropped RestoreUser, as Access asked
	// without a RestorePassword (the restore is over).
	ReasonRestoreUserDeleted Reason = "RestoreUserDeleted"
	// ReasonPasswordsAdded: nodes accept a wanted password they refused.
	ReasonPasswordsAdded Reason = "PasswordsAdded"
	// ReasonMasterAuthUpdated: nodes present the current password to their
	// masters.
	ReasonMasterAuthUpdated Reason = "MasterAuthUpdated"
	// ReasonPasswordsRemoved: nodes stopped accepting the passwords that
	// are not wanted any more.
	ReasonPasswordsRemoved Reason = "PasswordsRemoved"
	// ReasonAuthDisabled: the default user needs no password any more.
	ReasonAuthDisabled Reason = "AuthDisabled"
	// ReasonReplicaMigrationDisabled: nodes that ran with Redis's default
	// cluster-allow-replica-migration yes were set to no in place.
	ReasonReplicaMigrationDisabled Reason = "ReplicaMigrationDisabled"
	// ReasonCertificateReloaded: nodes read their certificate files again
	// and serve the renewed certificate.
	ReasonCertificateReloaded Reason = "CertificateReloaded"
)

// Action is one change Reconcile or ReconcileAccess made, for events and
// logs.
type Action struct {
	// Reason says what kind of change it is.
	Reason Reason
	// Message says what happened, naming nodes.
	Message string
}

// NodeState is what one node reports about itself.
type NodeState struct {
	// Name is the node's name, as given in the Topology.
	Name string
	// Addr is the address the resolver gave.
	Addr string
	// ID is the node's cluster ID.
	ID string
	// Master is true for a master, false for a replica.
	Master bool
	// MasterName names the master of a replica, or holds its ID when the
	// master is not a node of the topology.
	MasterName string
	// Slots is how many slots the node serves.
	Slots int
	// ClusterState is cluster_state from the node's CLUSTER INFO.
	ClusterState string
	// Leaving is true for a node of Topology.Leaving.
	Leaving bool
	// KnownNodes is how many nodes the node knows, itself included.
	KnownNodes int
}

// State describes the cluster.
type State struct {
	// Nodes are the reachable nodes, in topology order.
	Nodes []NodeState
	// Unreachable maps the nodes that could not be reached to why.
	Unreachable map[string]string
	// ClusterState is "ok" when every reachable node of a shard says so,
	// and otherwise the first other state reported ("fail").
	ClusterState string
	// SlotsAssigned is how many slots a reachable node serves.
	SlotsAssigned int
	// OpenSlots is how many slots are MIGRATING or IMPORTING somewhere.
	OpenSlots int
	// Masters is how many masters serve slots.
	Masters int
}

// Result is what Reconcile did and what is left.
type Result struct {
	// State is the cluster after the run.
	State State
	// Actions lists the changes made, in order.
	Actions []Action
	// Done is true when the cluster is the topology's: every node met,
	// slots balanced across the shard masters, replicas attached, no open
	// slot, and every leaving node drained and forgotten.
	Done bool
	// LeavingForgotten is true when every leaving node serves no slot and
	// no other node knows it, so it may be shut down.
	LeavingForgotten bool
	// LeavingDrained is true when there are leaving nodes and every one of
	// them served no slot when the run began: only then may a run forget
	// them (and, with Topology.KeepDrained, it does not).
	LeavingDrained bool
	// Pending says what is still to do when Done is false, e.g. "moving
	// 3277 slots to example-rediscluster-4".
	Pending string
	// SlotsMoved is how many slots the run moved with their keys.
	SlotsMoved int
	// Migration is what the run's moves of slots with their keys, the
	// interrupted ones it finished included, amounted to and how long
	// they took.
	Migration Migration
	// SlotsAssigned is how many slots the run gave to a master because no
	// node served them: every slot of a new cluster, and otherwise slots
	// whose keys are lost, since no node kept a copy. State.SlotsAssigned
	// is how many are served after the run.
	SlotsAssigned int
}

// UnreachableError says that some nodes could not be reached. Reconcile
// changes nothing while a node is unreachable: it cannot tell a node that
// is gone from one that is slow.
type UnreachableError struct {
	// Nodes maps each unreachable node to its error.
	Nodes map[string]string
	// Loading holds the nodes of Nodes that answered LOADING: a restarted
	// node reading its file, or a replica reading the copy its master sent.
	// They become usable without help.
	Loading map[string]bool
}

// OnlyLoading reports whether every node that could not be used was
// loading its dataset, which is expected after a restart and after a
// replica's full resynchronization, and needs no one's attention.
func (e *UnreachableError) OnlyLoading() bool {
	if len(e.Nodes) == 0 {
		return false
	}
	for n := range e.Nodes {
		if !e.Loading[n] {
			return false
		}
	}
	return true
}

// MaxListedNodes is how many unreachable nodes List and Error name; the
// rest are counted. The list ends up in a status condition and an event,
// which must stay short however many nodes a cluster has.
const MaxListedNodes = 10

// Error names the unreachable nodes and why, as List does.
func (e *UnreachableError) Error() string {
	return "unreachable nodes: " + e.List()
}

// List names the unreachable nodes and why, in the order of their names
// so that a status that shows it does not change from run to run:
// "node-1: why; node-2: why". Past MaxListedNodes it names no more and
// ends with "; and 5 more".
func (e *UnreachableError) List() string {
	names := make([]string, 0, len(e.Nodes))
	for n := range e.Nodes {
		names = append(names, n)
	}
	sort.Strings(names)
	listed := names[:min(len(names), MaxListedNodes)]
	parts := make([]string, len(listed), len(listed)+1)
	for i, n := range listed {
		parts[i] = n + ": " + e.Nodes[n]
	}
	if more := len(names) - len(listed); more > 0 {
		parts = append(parts, fmt.Sprintf("and %d more", more))
	}
	return strings.Join(parts, "; ")
}

// ListNames joins node names, in the order given, up to MaxListedNodes of
// them, and counts the rest: "a, b, and 5 more". For an event or a
// condition, which must stay short however many nodes a cluster has.
func ListNames(names []string) string {
	listed := names[:min(len(names), MaxListedNodes)]
	out := strings.Join(listed, ", ")
	if more := len(names) - len(listed); more > 0 {
		out += fmt.Sprintf(", and %d more", more)
	}
	return out
}

// IsUnreachable reports whether err is, or wraps, an UnreachableError.
func IsUnreachable(err error) bool {
	var u *UnreachableError
	return errors.As(err, &u)
}
