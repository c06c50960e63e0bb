package redisadmin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/redis/go-redis/v9"
)

// OperatorUser is the ACL user the Admin works as when Options.Password is
// set. It may run only what administering a cluster takes, never read a
// value or flush a database.
const OperatorUser = "multi-operator"

// operatorRules are OperatorUser's permissions. MIGRATE and RESTORE-ASKING
// carry keys between nodes, so the user needs every key pattern, but with
// neither GET nor any other data command it cannot read them. SELECT is
// what MIGRATE sends first (cluster mode has only database 0). CONFIG
// cannot be narrowed to the parameters the Admin sets (masterauth, the
// tls-* files and cluster-allow-replica-migration); Redis refuses the protected ones (dir, dbfilename, ...) at
// run time anyway. No ACL command: Redis cannot narrow ACL SETUSER to
// other users, and a user that may run it may grant itself every right.
// ReconcileAccess edits users as the default user instead.
var operatorRules = []string{
	"~*", "resetchannels", "-@all",
	"+cluster", "+migrate", "+restore-asking", "+asking", "+select",
	"+info", "+ping", "+config|get", "+config|set",
}

// forbiddenToOperator are commands OperatorUser must not be allowed: if
// a node allows one, its user was widened (or predates operatorRules), and
// ReconcileAccess resets it.
var forbiddenToOperator = [][]any{{"GET", "x"}, {"ACL", "SETUSER", OperatorUser}}

// ExporterUser is the ACL user the metrics exporter sidecar logs in as
// when Access.ExporterPassword is set. It may only read the server's
// statistics: no key, no channel, no setting.
const ExporterUser = "exporter"

// ExporterRules are ExporterUser's permissions: the commands
// redis_exporter sends on a scrape, started with ExporterArgs, and no
// other. CONFIG GET is not among them: Redis cannot narrow it to some
// parameters, and CONFIG GET masterauth would hand the exporter the
// clients' password, so the exporter runs with CONFIG skipped. SLOWLOG GET
// shows the latest slow commands with their first arguments, which Redis
// truncates and, for AUTH and the like, redacts.
var ExporterRules = []string{
	"resetkeys", "resetchannels", "-@all",
	"+ping", "+info", "+cluster|info", "+client|setname",
	"+latency|latest", "+latency|histogram", "+slowlog|len", "+slowlog|get",
}

// forbiddenToExporter are commands ExporterUser must not be allowed: if a
// node allows one, the user was widened, and ReconcileAccess resets it.
var forbiddenToExporter = [][]any{{"GET", "x"}, {"CONFIG", "GET", "masterauth"}, {"CLUSTER", "NODES"}}

// serviceUser is an ACL user the operator keeps on every node for one of
// its own clients, with a password it generated and fixed rules.
type serviceUser struct {
	name      string
	rules     []string
	forbidden [][]any
	// created, reset and deleted are the actions' reasons.
	created, reset, deleted Reason
	// what names the user's client in the actions' messages.
	what string
}

var (
	operatorServiceUser = serviceUser{
		name: OperatorUser, rules: operatorRules, forbidden: forbiddenToOperator,
		created: ReasonOperatorUserCreated, reset: ReasonOperatorUserReset, deleted: ReasonOperatorUserReset, what: "the operator's",
	}
	exporterServiceUser = serviceUser{
		name: ExporterUser, rules: ExporterRules, forbidden: forbiddenToExporter,
		created: ReasonExporterUserCreated, reset: ReasonExporterUserReset, deleted: ReasonExporterUserDeleted, what: "the exporter's",
	}
)

// userPassword is a service user and the password Access gives it.
type userPassword struct {
	user     serviceUser
	password string
}

// serviceUsers are the users a node has besides the default user and
// OperatorUser, with their passwords: one that is empty must not exist.
func (a Access) serviceUsers() []userPassword {
	return []userPassword{
		{exporterServiceUser, a.ExporterPassword},
		{canaryServiceUser, a.CanaryPassword},
		{backupServiceUser, a.BackupPassword},
		{restoreServiceUser, a.RestorePassword},
	}
}

// configLine is the users file line that gives u password.
func (u serviceUser) configLine(password string) string {
	return "user " + u.name + " reset on #" + Hash(password) + " " + strings.Join(u.rules, " ") + "\n"
}

// Access is what every node must enforce: the clients' passwords, the
// operator's own user, and with TLS the certificate to serve.
type Access struct {
	// Passwords are the passwords the default user accepts, the current one
	// first: replicas present it to their masters (masterauth). None turns
	// authentication off: the default user needs no password.
	Passwords []string
	// OperatorPassword is OperatorUser's password.
	OperatorPassword string
	// ExporterPassword is ExporterUser's password. Empty means no exporter
	// runs: the nodes must not have the user.
	ExporterPassword string
	// CanaryPassword is CanaryUser's password. Empty means no write
	// canary runs: the nodes must not have the user.
	CanaryPassword string
	// BackupPassword is BackupUser's password. Empty means the nodes must
	// not have the user.
	BackupPassword string
	// RestorePassword is RestoreUser's password. Empty means the nodes
	// must not have the user: no restore runs.
	RestorePassword string
	// KnownPasswords are passwords the default user may still accept,
	// besides Passwords: those every node enforced when a run last
	// completed. ReconcileAccess logs in with them to change the default
	// user, and does not keep them.
	KnownPasswords []string
	// Certificate, with TLS, is the PEM certificate the nodes must serve; a
	// node that serves another one reloads its certificate files.
	Certificate []byte
}

// Hash returns the SHA-256 form in which Redis keeps a password.
func Hash(password string) string {
	sum := sha256.Sum256([]byte(password))
	return hex.EncodeToString(sum[:])
}

// ConfigFile renders the part of redis.conf that the operator writes into
// a Secret rather than onto the command line: the users and masterauth,
// so that the passwords never appear in the pod spec (passwords are
// written as hashes, masterauth, which must be plain text, quoted), and
// the settings the operator also sets on live nodes (ReplicaMigration),
// which on the command line would change the pod template and roll every
// existing cluster. A node reads it at start from the mounted Secret.
func (a Access) ConfigFile() string {
	var b strings.Builder
	b.WriteString("# Written by multi-operator from the RedisCluster's Secrets; edits are overwritten.\n")
	b.WriteString(ReplicaMigration + " no\n")
	b.WriteString("user default reset on " + strings.Join(defaultUserRules(a.Passwords), " ") + "\n")
	b.WriteString(operatorServiceUser.configLine(a.OperatorPassword))
	for _, s := range a.serviceUsers() {
		if s.password != "" {
			b.WriteString(s.user.configLine(s.password))
		}
	}
	if len(a.Passwords) > 0 {
		b.WriteString(masterauthDirective + Quote(a.Passwords[0]) + "\n")
	}
	return b.String()
}

// defaultUserRules are the default user's password rules and permissions.
func defaultUserRules(passwords []string) []string {
	var rules []string
	if len(passwords) == 0 {
		rules = append(rules, "nopass")
	}
	for _, h := range hashes(passwords) {
		rules = append(rules, "#"+h)
	}
	return append(rules, "~*", "&*", "+@all")
}

// hashes returns the distinct hashes of passwords, sorted.
func hashes(passwords []string) []string {
	var out []string
	for _, p := range passwords {
		if h := Hash(p); !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	sort.Strings(out)
	return out
}

// Quote writes s as a double-quoted redis.conf argument that Redis reads
// back as exactly s, whatever bytes it holds.
func Quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\\', '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&b, `\x%02x`, c)
			} else {
				b.WriteByte(c)
			}
		}
	}
	b.WriteByte('"')
	return b.String()
}

// ErrPasswordsRefused is why a node that answers is not reached: it
// refuses every password of the default user the operator knows.
var ErrPasswordsRefused = errors.New("refuses every password of the default user the operator knows")

// AccessResult is what ReconcileAccess did.
type AccessResult struct {
	// Actions lists the changes made, in order.
	Actions []Action
	// Unreachable maps the nodes that could not be reached to why; they get
	// the current access when they are back.
	Unreachable map[string]string
	// Refused are the nodes, among Unreachable, that answered but refuse
	// every password of the default user the operator knows: a password
	// changed behind the operator's back, or a rotation that lost track.
	Refused []string
	// Rotated is true when a node's passwords or masterauth changed.
	Rotated bool
	// Pending says what is left, such as a node still serving its old
	// certificate because its mounted files are not renewed yet.
	Pending string
}

// Done reports whether every node enforces the access.
func (r AccessResult) Done() bool { return len(r.Unreachable) == 0 && r.Pending == "" }

// accessNode is a node connected as the default user, who alone may
// change users.
type accessNode struct {
	name   string
	client *redis.Client
	// served records the certificate the node presented.
	served *servedCert
}

// ReconcileAccess makes every reachable node of names enforce want, and
// leaves the unreachable ones to a later run. It works as the default
// user, with a password of want.Passwords or want.KnownPasswords, and
// gives OperatorUser its password and rules where they differ. A rotation never breaks
// replication or locks the operator out: first every node accepts every
// wanted password, then every node presents the current one to its
// master, and only then do the nodes stop accepting the others. Each step
// reads the nodes first, so an interrupted run resumes where it stopped.
// A node that still runs without OperatorUser (created before it existed)
// gets the user when its default user needs no password.
func (a *Admin) ReconcileAccess(ctx context.Context, names []string, want Access) (AccessResult, error) {
	ctx, cancel := a.runContext(ctx)
	defer cancel()
	res := AccessResult{Unreachable: map[string]string{}}
	var nodes []*accessNode
	defer func() {
		for _, n := range nodes {
			_ = n.client.Close()
		}
	}()
	// Each connection records its actions apart; they join in the order of
	// names.
	connected := make([]*accessNode, len(names))
	errs := make([]error, len(names))
	acted := make([]AccessResult, len(names))
	eachParallel(len(names), connectParallelism, func(i int) {
		connected[i], errs[i] = a.connectAccess(ctx, names[i], want, &acted[i])
	})
	for i, name := range names {
		res.Actions = append(res.Actions, acted[i].Actions...)
		if errs[i] != nil {
			res.Unreachable[name] = errs[i].Error()
			if errors.Is(errs[i], ErrPasswordsRefused) {
				res.Refused = append(res.Refused, name)
			}
			continue
		}
		nodes = append(nodes, connected[i])
	}
	steps := []func(context.Context, []*accessNode, Access, *AccessResult) error{
		addPasswords, setMasterAuth, removePasswords,
	}
	if want.Certificate != nil {
		steps = append(steps, a.reloadCertificates)
	}
	for _, step := range steps {
		if err := step(ctx, nodes, want, &res); err != nil {
			return res, err
		}
	}
	return res, nil
}

func (r *AccessResult) act(reason Reason, format string, args ...any) {
	r.Actions = append(r.Actions, Action{Reason: reason, Message: fmt.Sprintf(format, args...)})
}

// connectAccess reaches a node as the default user, and makes sure that
// OperatorUser has its password and only its rules: a node may predate
// the user, hold a password lost with its Secret and made anew, or hold
// rules someone widened. An Admin without a user (authentication off, in
// tests) connects as it is.
func (a *Admin) connectAccess(ctx context.Context, name string, want Access, res *AccessResult) (*accessNode, error) {
	addr, err := a.resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	n := &accessNode{name: name, served: &servedCert{}}
	if a.opts.Username == "" {
		n.client = a.dialAs(addr, "", a.opts.Password, n.served)
		if err := n.client.Ping(ctx).Err(); err != nil {
			_ = n.client.Close()
			return nil, err
		}
	} else {
		n.client, err = a.defaultUserClient(ctx, addr, n.served, slices.Concat(want.Passwords, want.KnownPasswords))
		if err != nil {
			if isErr(err, "WRONGPASS") || isErr(err, "NOAUTH") {
				err = fmt.Errorf("%s %w", name, ErrPasswordsRefused)
			}
			return nil, err
		}
		err = keepServiceUser(ctx, n, operatorServiceUser, a.opts.Password, res)
	}
	for _, s := range want.serviceUsers() {
		if err != nil {
			break
		}
		err = keepServiceUser(ctx, n, s.user, s.password, res)
	}
	if err != nil {
		_ = n.client.Close()
		return nil, err
	}
	return n, nil
}

// keepServiceUser makes u on n have password and only u's rules, or, with
// no password, not exist, and records what it changed.
func keepServiceUser(ctx context.Context, n *accessNode, u serviceUser, password string, res *AccessResult) error {
	if password == "" {
		deleted, err := n.client.Do(ctx, "ACL", "DELUSER", u.name).Int()
		if err != nil {
			return fmt.Errorf("ACL DELUSER %s on %s: %w", u.name, n.name, err)
		}
		if deleted > 0 {
			res.act(u.deleted, "deleted %s ACL user %s on %s", u.what, u.name, n.name)
		}
		return nil
	}
	reason, err := serviceUserDrift(ctx, n, u, password)
	if err != nil || reason == "" {
		return err
	}
	if err := setServiceUser(ctx, n, u, password); err != nil {
		return err
	}
	if reason == u.created {
		res.act(reason, "created %s ACL user %s on %s", u.what, u.name, n.name)
	} else {
		res.act(reason, "reset %s ACL user %s on %s to its own password and rules", u.what, u.name, n.name)
	}
	return nil
}

// serviceUserDrift tells how u on n differs from what it must be: missing
// (u.created), or with another password than password, off, or allowed a
// command it must not run (u.reset). It returns "" when the user is as it
// must be.
func serviceUserDrift(ctx context.Context, n *accessNode, u serviceUser, password string) (Reason, error) {
	v, err := n.client.Do(ctx, "ACL", "GETUSER", u.name).Result()
	if errors.Is(err, redis.Nil) {
		return u.created, nil
	}
	if err != nil {
		return "", fmt.Errorf("ACL GETUSER %s on %s: %w", u.name, n.name, err)
	}
	got := parseUser(v)
	if !got.on || !slices.Equal(got.hashes, []string{Hash(password)}) {
		return u.reset, nil
	}
	for _, cmd := range u.forbidden {
		allowed, err := n.client.Do(ctx, append([]any{"ACL", "DRYRUN", u.name}, cmd...)...).Result()
		if err != nil {
			return "", fmt.Errorf("ACL DRYRUN on %s: %w", n.name, err)
		}
		if allowed == "OK" {
			return u.reset, nil
		}
	}
	return "", nil
}

// setServiceUser gives u password and u's rules on n.
func setServiceUser(ctx context.Context, n *accessNode, u serviceUser, password string) error {
	args := []any{"ACL", "SETUSER", u.name, "reset", "on", "#" + Hash(password)}
	for _, r := range u.rules {
		args = append(args, r)
	}
	if err := n.client.Do(ctx, args...).Err(); err != nil {
		return fmt.Errorf("setting the user %s on %s: %w", u.name, n.name, err)
	}
	return nil
}

// defaultUserClient logs in to addr as the default user with the first
// of passwords the node accepts, or without one. A node whose default user
// needs no password accepts any. The passwords come wanted first: a run
// never removes those, so the connection's password stays valid.
func (a *Admin) defaultUserClient(ctx context.Context, addr string, served *servedCert, passwords []string) (*redis.Client, error) {
	var err error
	for _, p := range append(slices.Clone(passwords), "") {
		c := a.dialAs(addr, "", p, served)
		if err = c.Ping(ctx).Err(); err == nil {
			return c, nil
		}
		_ = c.Close()
		if !isErr(err, "NOAUTH") && !isErr(err, "WRONGPASS") {
			return nil, err
		}
	}
	return nil, err
}

// aclUser is what ACL GETUSER says of a user.
type aclUser struct {
	on, nopass bool
	hashes     []string
}

// parseUser reads the flags and password hashes of an ACL GETUSER reply.
func parseUser(v any) aclUser {
	var u aclUser
	fields, _ := v.([]any)
	for i := 0; i+1 < len(fields); i += 2 {
		key, _ := fields[i].(string)
		list, _ := fields[i+1].([]any)
		for _, item := range list {
			s, _ := item.(string)
			switch key {
			case "flags":
				u.on = u.on || s == "on"
				u.nopass = u.nopass || s == "nopass"
			case "passwords":
				u.hashes = append(u.hashes, s)
			}
		}
	}
	return u
}

func getDefaultUser(ctx context.Context, n *accessNode) (aclUser, error) {
	v, err := n.client.Do(ctx, "ACL", "GETUSER", "default").Result()
	if err != nil {
		return aclUser{}, fmt.Errorf("ACL GETUSER default on %s: %w", n.name, err)
	}
	return parseUser(v), nil
}

// editDefaultUser runs ACL SETUSER default with the rules edit returns for
// each node's default user, where it returns any, and returns the nodes it
// changed.
func editDefaultUser(ctx context.Context, nodes []*accessNode, edit func(aclUser) []any) ([]string, error) {
	var changed []string
	for _, n := range nodes {
		u, err := getDefaultUser(ctx, n)
		if err != nil {
			return nil, err
		}
		rules := edit(u)
		if len(rules) == 0 {
			continue
		}
		if err := n.client.Do(ctx, append([]any{"ACL", "SETUSER", "default"}, rules...)...).Err(); err != nil {
			return nil, fmt.Errorf("changing the passwords of the default user on %s: %w", n.name, err)
		}
		changed = append(changed, n.name)
	}
	return changed, nil
}

// presentMasterAuth makes every node present value to its master
// (masterauth), and returns the nodes it changed.
func presentMasterAuth(ctx context.Context, nodes []*accessNode, value string) ([]string, error) {
	var changed []string
	for _, n := range nodes {
		got, err := n.client.ConfigGet(ctx, "masterauth").Result()
		if err != nil {
			return nil, fmt.Errorf("CONFIG GET masterauth on %s: %w", n.name, err)
		}
		if got["masterauth"] == value {
			continue
		}
		if err := n.client.ConfigSet(ctx, "masterauth", value).Err(); err != nil {
			return nil, fmt.Errorf("CONFIG SET masterauth on %s: %w", n.name, err)
		}
		changed = append(changed, n.name)
	}
	return changed, nil
}

// addPasswords makes every node accept every wanted password.
func addPasswords(ctx context.Context, nodes []*accessNode, want Access, res *AccessResult) error {
	wanted := hashes(want.Passwords)
	changed, err := editDefaultUser(ctx, nodes, func(u aclUser) []any {
		var rules []any
		for _, h := range wanted {
			if !slices.Contains(u.hashes, h) {
				rules = append(rules, "#"+h)
			}
		}
		if len(rules) == 0 {
			return nil
		}
		return append([]any{"on"}, rules...)
	})
	if err != nil || len(changed) == 0 {
		return err
	}
	res.Rotated = true
	res.act(ReasonPasswordsAdded, "the default user accepts the current password on %s", strings.Join(changed, ", "))
	return nil
}

// setMasterAuth makes every node present the current password to its
// master. With authentication off there is none: removePasswords clears
// masterauth once no node requires a password.
func setMasterAuth(ctx context.Context, nodes []*accessNode, want Access, res *AccessResult) error {
	if len(want.Passwords) == 0 {
		return nil
	}
	changed, err := presentMasterAuth(ctx, nodes, want.Passwords[0])
	if err != nil || len(changed) == 0 {
		return err
	}
	res.Rotated = true
	res.act(ReasonMasterAuthUpdated, "%s present the current password to their masters", strings.Join(changed, ", "))
	return nil
}

// removePasswords makes the nodes stop accepting passwords that are not
// wanted any more; with authentication off, the default user needs none
// and the nodes stop presenting one.
func removePasswords(ctx context.Context, nodes []*accessNode, want Access, res *AccessResult) error {
	wanted := hashes(want.Passwords)
	changed, err := editDefaultUser(ctx, nodes, func(u aclUser) []any {
		var rules []any
		switch {
		case len(wanted) == 0 && !u.nopass:
			rules = append(rules, "nopass")
		case len(wanted) > 0:
			for _, h := range u.hashes {
				if !slices.Contains(wanted, h) {
					rules = append(rules, "!"+h)
				}
			}
		}
		return rules
	})
	if err != nil {
		return err
	}
	if len(wanted) == 0 {
		cleared, err := presentMasterAuth(ctx, nodes, "")
		if err != nil {
			return err
		}
		for _, name := range cleared {
			if !slices.Contains(changed, name) {
				changed = append(changed, name)
			}
		}
	}
	if len(changed) == 0 {
		return nil
	}
	res.Rotated = true
	if len(wanted) == 0 {
		res.act(ReasonAuthDisabled, "the default user needs no password on %s", strings.Join(changed, ", "))
	} else {
		res.act(ReasonPasswordsRemoved, "the default user accepts only the current passwords on %s", strings.Join(changed, ", "))
	}
	return nil
}

// tlsFiles are the parameters that name a node's certificate files.
var tlsFiles = []string{"tls-cert-file", "tls-key-file", "tls-ca-cert-file"}

// reloadCertificates makes every node that serves another certificate
// than want.Certificate read its files again. Setting a file to the path it
// already has does nothing in Redis, so each path alternates between two
// spellings of the same file (dir/f and dir/./f). A node whose mounted
// files are not renewed yet serves the old certificate after the reload;
// Pending says so and a later run reloads again.
func (a *Admin) reloadCertificates(ctx context.Context, nodes []*accessNode, want Access, res *AccessResult) error {
	block, _ := pem.Decode(want.Certificate)
	if block == nil {
		return fmt.Errorf("the certificate to serve is not PEM")
	}
	var reloaded, stale []string
	for _, n := range nodes {
		if n.served.matches(block.Bytes) {
			continue
		}
		args := []any{"CONFIG", "SET"}
		for _, param := range tlsFiles {
			got, err := n.client.ConfigGet(ctx, param).Result()
			if err != nil {
				return fmt.Errorf("CONFIG GET %s on %s: %w", param, n.name, err)
			}
			args = append(args, param, respell(got[param]))
		}
		if err := n.client.Do(ctx, args...).Err(); err != nil {
			return fmt.Errorf("reloading the certificate of %s: %w", n.name, err)
		}
		// A new connection shows what the node serves now.
		addr := n.client.Options().Addr
		_ = n.client.Close()
		n.served = &servedCert{}
		n.client = a.dialAs(addr, a.opts.Username, a.opts.Password, n.served)
		if err := n.client.Ping(ctx).Err(); err != nil {
			return fmt.Errorf("%s after reloading its certificate: %w", n.name, err)
		}
		if n.served.matches(block.Bytes) {
			reloaded = append(reloaded, n.name)
		} else {
			stale = append(stale, n.name)
		}
	}
	if len(reloaded) > 0 {
		res.act(ReasonCertificateReloaded, "%s serve the renewed certificate", strings.Join(reloaded, ", "))
	}
	if len(stale) > 0 {
		res.Pending = fmt.Sprintf("waiting for the renewed certificate to reach the files of %s", strings.Join(stale, ", "))
	}
	return nil
}

// respell returns another spelling of the path file: dir/./f for dir/f,
// and back.
func respell(file string) string {
	dir, base := path.Split(file)
	if dir == "./" || strings.HasSuffix(dir, "/./") {
		return strings.TrimSuffix(dir, "./") + base
	}
	return dir + "./" + base
}
