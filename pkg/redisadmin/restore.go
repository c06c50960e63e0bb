package redisadmin

import (
	"crypto/x509"

	"github.com/redis/go-redis/v9"
	"github.com/redis/go-redis/v9/maintnotifications"
)

// RestoreUser is the ACL user a restore logs in as: it writes every key of
// a backup with RESTORE and loads the backup's function libraries, and may
// read no key, run no other data command, read no setting and change no
// user. A node has it only while its cluster restores.
const RestoreUser = "restore"

// restoreRules are RestoreUser's permissions: what a cluster client made
// with RestoreClusterOptions sends to find the masters (CLUSTER SLOTS;
// PING, to tell a node that still loads its data; COMMAND, whose key
// positions route a command it is given, such as a RESTORE sent again
// after a MOVED; ASKING, which it sends before a RESTORE that a node
// moving the key's slot redirected with ASK) and what pkg/redisrestore sends (RESTORE ... REPLACE
// ABSTTL on every key, FUNCTION LOAD REPLACE per library). HELLO and AUTH,
// with which every connection logs in, need no permission. COMMAND and its
// subcommands describe commands only. RESTORE ... REPLACE
// overwrites any key, and a past ABSTTL removes one, so whoever has this
// password may change or destroy the data, as with the clients' password;
// but the user can read no value, list no key (RESTORE without REPLACE
// only tells whether a key it names exists) and run no function. A
// function library it loads runs only when a client calls it, with that
// client's rights.
var restoreRules = []string{
	"~*", "resetchannels", "-@all",
	"+ping", "+cluster|slots", "+command", "+asking", "+restore", "+function|load",
}

// forbiddenToRestore are commands RestoreUser must not be allowed: if a
// node allows one, the user was widened, and ReconcileAccess resets it.
var forbiddenToRestore = [][]any{
	{"GET", "x"}, {"KEYS", "*"}, {"FLUSHALL"}, {"FCALL", "f", "0"}, {"CONFIG", "GET", "masterauth"}, {"ACL", "SETUSER", RestoreUser},
}

var restoreServiceUser = serviceUser{
	name: RestoreUser, rules: restoreRules, forbidden: forbiddenToRestore,
	created: ReasonRestoreUserCreated, reset: ReasonRestoreUserReset, deleted: ReasonRestoreUserDeleted, what: "the restore's",
}

// RestoreClusterOptions are the options of the cluster client a restore
// writes through, logged in as username (RestoreUser, or the default user
// when empty) with password, over TLS verified against roots when set. It
// sends what restoreRules allow and nothing else: no CLIENT SETINFO
// (DisableIdentity) and no CLIENT MAINT_NOTIFICATIONS, which RestoreUser
// may not run and which a node of the operator's has no use for.
func RestoreClusterOptions(seeds []string, username, password string, roots *x509.CertPool) *redis.ClusterOptions {
	return &redis.ClusterOptions{
		Addrs:                    seeds,
		Username:                 username,
		Password:                 password,
		TLSConfig:                TLSConfig(roots),
		Protocol:                 2,
		DisableIdentity:          true,
		MaintNotificationsConfig: &maintnotifications.Config{Mode: maintnotifications.ModeDisabled},
	}
}
