package images

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// The numeric users the images run as. The operands' match the uid their
// controller's pod security context sets (controllers/*/builders.go and
// job.go), which runAsNonRoot needs to find numeric in the image too.
const (
	// ManagerUID is distroless's nonroot, as in the Dockerfile.
	ManagerUID = 65532
	// RedisUID is the redis user of the official images.
	RedisUID = 999
	// MemcachedUID is the memcached tutorial's uid.
	MemcachedUID = 1001
	// WhalesayUID is nobody.
	WhalesayUID = 65534
	// RedisExporterUID is the uid of redis_exporter's own image. The
	// RedisCluster pods run it as RedisUID, their pod's user; the image's
	// own user is nonroot for when it runs alone.
	RedisExporterUID = 59000
	// PauseUID is the uid the pause container runs as.
	PauseUID = 65535
	// HelloWorldUID is nobody, the uid the TDSet controller's pods run as
	// (controllers/tdset/deployment.go).
	HelloWorldUID = 65534
)

// Host paths the images are built from: Debian's packages.
const (
	// CABundle is Debian's ca-certificates bundle.
	CABundle = "/etc/ssl/certs/ca-certificates.crt"
	// RedisServer is the redis-server package's binary.
	RedisServer = "/usr/bin/redis-server"
	// RedisCLI is the redis-tools package's client, which redis-server
	// depends on.
	RedisCLI = "/usr/bin/redis-cli"
	// MemcachedBinary is the memcached package's binary.
	MemcachedBinary = "/usr/bin/memcached"
	// Cowsay is the cowsay package's Perl script.
	Cowsay = "/usr/games/cowsay"
	// CowsDir holds the cowsay package's cow files.
	CowsDir = "/usr/share/cowsay/cows"
	// UTF8Locale is glibc's C.UTF-8 locale, which cowsay needs to measure
	// a message that is not ASCII.
	UTF8Locale = "/usr/lib/locale/C.utf8"
	// Busybox is the busybox-static package's binary, which needs no
	// library.
	Busybox = "/bin/busybox"
)

// Account is a user of an image's /etc/passwd, with a group of the same
// name and number.
type Account struct {
	// Name is the user's and the group's name.
	Name string
	// ID is the uid and the gid.
	ID int
	// Home is the home directory, which need not exist.
	Home string
}

// rootAccount is in every image's /etc/passwd.
var rootAccount = Account{Name: "root", ID: 0, Home: "/root"}

// Passwd renders accounts as /etc/passwd, in the given order. No account
// has a shell: the images have none.
func Passwd(accounts []Account) []byte {
	var b bytes.Buffer
	for _, a := range accounts {
		fmt.Fprintf(&b, "%s:x:%d:%d:%s:%s:/sbin/nologin\n", a.Name, a.ID, a.ID, a.Name, a.Home)
	}
	return b.Bytes()
}

// Group renders the accounts' groups as /etc/group, in the given order.
func Group(accounts []Account) []byte {
	var b bytes.Buffer
	for _, a := range accounts {
		fmt.Fprintf(&b, "%s:x:%d:\n", a.Name, a.ID)
	}
	return b.Bytes()
}

// accountFiles are /etc/passwd and /etc/group for root and accounts.
func accountFiles(accounts ...Account) []File {
	all := append([]Account{rootAccount}, accounts...)
	return []File{
		Content("/etc/passwd", 0o644, Passwd(all)),
		Content("/etc/group", 0o644, Group(all)),
	}
}

// userSpec is the image config's User for uid: "uid:gid", both numeric.
func userSpec(uid int) string {
	return strconv.Itoa(uid) + ":" + strconv.Itoa(uid)
}

// ManagerBuildFlags are the go build flags of the manager's binary, the
// Dockerfile's: -trimpath, and -ldflags "-s -w" for no symbol table or
// DWARF. -buildvcs=false leaves out the VCS stamp, as the Dockerfile's
// build context does by having no .git, so that the binary depends on the
// source alone.
var ManagerBuildFlags = []string{"-trimpath", "-buildvcs=false", "-ldflags=-s -w"}

// ManagerBuildEnv is the environment of the manager's go build besides the
// caller's: a static binary, with no cgo, for Linux on arch (a GOARCH; this
// machine's when empty).
func ManagerBuildEnv(arch string) []string {
	return []string{"CGO_ENABLED=0", "GOOS=linux", "GOARCH=" + cmp.Or(arch, runtime.GOARCH)}
}

// BuildManager builds the manager's static binary from the main module in
// moduleDir into out with goTool (go, when empty), for Linux on arch (a
// GOARCH; this machine's when empty). When out already holds
// the same bytes, it is left alone, its modification time too, so that
// make does not rebuild the image; changed tells which happened.
func BuildManager(ctx context.Context, goTool, moduleDir, out, arch string) (changed bool, err error) {
	if goTool == "" {
		goTool = "go"
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return false, err
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return false, err
	}
	tmp := abs + ".new"
	defer os.Remove(tmp) //nolint:errcheck // gone after the rename
	args := append(append([]string{"build"}, ManagerBuildFlags...), "-o", tmp, "./cmd/manager")
	cmd := exec.CommandContext(ctx, goTool, args...)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), ManagerBuildEnv(arch)...)
	if b, err := cmd.CombinedOutput(); err != nil {
		return false, fmt.Errorf("%s %s: %w\n%s", goTool, strings.Join(args, " "), err, b)
	}
	same, err := sameContent(tmp, abs)
	if err != nil || same {
		return false, err
	}
	return true, os.Rename(tmp, abs)
}

// sameContent tells whether the files a and b exist and hold the same bytes.
func sameContent(a, b string) (bool, error) {
	ab, err := os.ReadFile(a)
	if err != nil {
		return false, err
	}
	bb, err := os.ReadFile(b)
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.Equal(ab, bb), nil
}

// PauseCFlags are gcc's flags for the pause program: static, so the image
// needs no library, optimized for size and stripped.
var PauseCFlags = []string{"-static", "-Os", "-s", "-Wall", "-Wextra", "-Werror"}

// BuildPause compiles the pause program's C source src into out with gcc.
func BuildPause(ctx context.Context, src, out string) error {
	args := append(append([]string{}, PauseCFlags...), "-o", out, src)
	if b, err := exec.CommandContext(ctx, "gcc", args...).CombinedOutput(); err != nil {
		return fmt.Errorf("gcc %s: %w\n%s", strings.Join(args, " "), err, b)
	}
	return nil
}

// executable is the host's binary at dst in an image, executable by
// anyone, and the architecture it was built for, which the image's
// config names.
func executable(binary, dst string) (File, string, error) {
	arch, err := ELFArch(binary)
	if err != nil {
		return File{}, "", err
	}
	bin, err := HostFile(binary, dst)
	if err != nil {
		return File{}, "", err
	}
	bin.Mode = 0o755
	return bin, arch, nil
}

// Manager is the manager's image: the static binary at /manager, Debian's
// CA bundle, a nonroot user 65532, an empty /tmp and no shell, like the
// Dockerfile's distroless static:nonroot base.
func Manager(binary, caBundle string) (Spec, error) {
	bin, arch, err := executable(binary, "/manager")
	if err != nil {
		return Spec{}, err
	}
	ca, err := HostFile(caBundle, CABundle)
	if err != nil {
		return Spec{}, err
	}
	ca.Mode = 0o644
	nonroot := Account{Name: "nonroot", ID: ManagerUID, Home: "/home/nonroot"}
	nobody := Account{Name: "nobody", ID: 65534, Home: "/nonexistent"}
	files := append(accountFiles(nobody, nonroot),
		bin, ca,
		Dir("/home/nonroot", 0o700, ManagerUID, ManagerUID),
		Dir("/tmp", 0o1777, 0, 0),
	)
	return Spec{
		Files:       files,
		Entrypoint:  []string{"/manager"},
		User:        userSpec(ManagerUID),
		Description: "multi-operator manager",
		Arch:        arch,
	}, nil
}

// withLibraries adds the files binaries are copied to, where they are given
// by the map's keys from the host files of its values, and every shared
// object they load, at the path ldd gives.
func withLibraries(ctx context.Context, binaries map[string]string) ([]File, error) {
	var files []File
	sources := make([]string, 0, len(binaries))
	for dst, src := range binaries {
		f, err := HostFile(src, dst)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		sources = append(sources, src)
	}
	libs, err := SharedLibraries(ctx, sources...)
	if err != nil {
		return nil, err
	}
	libFiles, err := HostFiles(libs...)
	if err != nil {
		return nil, err
	}
	return append(files, libFiles...), nil
}

// Redis is redis-server's image from Debian's package: the binary with its
// libraries, user redis (999) and a /data it owns, the working directory.
// The binary keeps the name redis-server, which tells it to serve: the
// package installs it as a link to redis-check-rdb. The image also holds
// redis-cli, from the redis-tools package that redis-server depends on, with
// its libraries, so that a client pod can run this image with `redis-cli`
// as its command (REDISCLI_AUTH in its environment gives the password).
func Redis(ctx context.Context, server, cli string) (Spec, error) {
	files, err := withLibraries(ctx, map[string]string{RedisServer: server, RedisCLI: cli})
	if err != nil {
		return Spec{}, err
	}
	files = append(files, accountFiles(Account{Name: "redis", ID: RedisUID, Home: "/data"})...)
	files = append(files, Dir("/data", 0o755, RedisUID, RedisUID))
	return Spec{
		Files:       files,
		Entrypoint:  []string{"redis-server"},
		User:        userSpec(RedisUID),
		WorkingDir:  "/data",
		Description: "redis-server and redis-cli from Debian's redis-server and redis-tools packages",
	}, nil
}

// Memcached is memcached's image from Debian's package: the binary with
// its libraries, and user memcache (1001).
func Memcached(ctx context.Context, binary string) (Spec, error) {
	files, err := withLibraries(ctx, map[string]string{"/usr/bin/memcached": binary})
	if err != nil {
		return Spec{}, err
	}
	files = append(files, accountFiles(Account{Name: "memcache", ID: MemcachedUID, Home: "/nonexistent"})...)
	return Spec{
		Files:       files,
		Entrypoint:  []string{"memcached"},
		User:        userSpec(MemcachedUID),
		Description: "memcached from Debian's memcached package",
	}, nil
}

// ParseShebang returns the interpreter of a script's first line, such as
// /usr/bin/perl for "#!/usr/bin/perl -w".
func ParseShebang(line string) (string, error) {
	rest, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "#!")
	if !ok {
		return "", fmt.Errorf("no #! line")
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || !path.IsAbs(fields[0]) {
		return "", fmt.Errorf("#! line %q names no absolute interpreter", line)
	}
	return fields[0], nil
}

// interpreter reads the interpreter of the script file.
func interpreter(script string) (string, error) {
	f, err := os.Open(script)
	if err != nil {
		return "", err
	}
	defer f.Close() //nolint:errcheck // read only
	line, err := bufio.NewReader(f).ReadString('\n')
	if err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	ip, err := ParseShebang(line)
	if err != nil {
		return "", fmt.Errorf("%s: %w", script, err)
	}
	return ip, nil
}

// WhalesayLocale is the locale of the whalesay image, whose files come
// from UTF8Locale: under it cowsay measures a message that is not ASCII by
// its characters, not its bytes.
const WhalesayLocale = "C.UTF-8"

// inventoryMessage is what cowsay prints while Whalesay watches which Perl
// modules it loads: long enough to wrap, and not ASCII, so the UTF-8 code
// paths run too.
const inventoryMessage = "Grüße aus dem Image 🐳: a message long enough to wrap over cowsay's forty columns"

// Whalesay is the image that runs `cowsay MESSAGE`, as the WhaleSay
// controller's Job does: Debian's cowsay script and cow files, the Perl
// interpreter its #! line names with the modules and XS objects cowsay
// loads and their libraries, and the C.UTF-8 locale. It runs as nobody.
// cowsay is in /usr/games, which is in the image's PATH.
func Whalesay(ctx context.Context, cowsay, cows, locale string) (Spec, error) {
	perl, err := interpreter(cowsay)
	if err != nil {
		return Spec{}, err
	}
	env := []string{"LANG=" + WhalesayLocale, "COWPATH=" + cows}
	loaded, err := PerlModules(ctx, perl, cowsay, "cowsay", append([]string{DefaultPath}, env...), []string{inventoryMessage})
	if err != nil {
		return Spec{}, err
	}
	binaries := map[string]string{perl: perl}
	var scripts []string
	for _, f := range loaded {
		if strings.HasSuffix(f, ".so") {
			binaries[f] = f
		} else {
			scripts = append(scripts, f)
		}
	}
	files, err := withLibraries(ctx, binaries)
	if err != nil {
		return Spec{}, err
	}
	sf, err := HostFiles(scripts...)
	if err != nil {
		return Spec{}, err
	}
	files = append(files, sf...)
	script, err := HostFile(cowsay, Cowsay)
	if err != nil {
		return Spec{}, err
	}
	files = append(files, script)
	for _, dir := range []string{cows, locale} {
		tree, err := HostTree(dir)
		if err != nil {
			return Spec{}, err
		}
		files = append(files, tree...)
	}
	files = append(files, accountFiles(Account{Name: "nobody", ID: WhalesayUID, Home: "/nonexistent"})...)
	return Spec{
		Files:       files,
		Entrypoint:  []string{"cowsay"},
		Cmd:         []string{"Hello from whalesay"},
		User:        userSpec(WhalesayUID),
		Env:         append([]string{DefaultPath}, env...),
		Description: "cowsay from Debian's cowsay package",
	}, nil
}

// RedisExporter is the image of redis_exporter (built by make from the
// version hack/tools/redisexporter pins): the static binary at
// /redis_exporter, its entrypoint, run as RedisExporterUID, with no shell.
// Its port, 9121, is the RedisCluster sidecar's metrics port.
func RedisExporter(binary string) (Spec, error) {
	bin, arch, err := executable(binary, "/redis_exporter")
	if err != nil {
		return Spec{}, err
	}
	user := Account{Name: "exporter", ID: RedisExporterUID, Home: "/nonexistent"}
	return Spec{
		Files:       append(accountFiles(user), bin),
		Entrypoint:  []string{"/redis_exporter"},
		User:        userSpec(RedisExporterUID),
		Description: "redis_exporter, the Prometheus exporter for Redis",
		Arch:        arch,
	}, nil
}

// Pause is the image of the pause program (hack/images/pause/pause.c,
// built with BuildPause): the static binary at /pause, run as 65535.
func Pause(binary string) (Spec, error) {
	bin, err := HostFile(binary, "/pause")
	if err != nil {
		return Spec{}, err
	}
	bin.Mode = 0o755
	return Spec{
		Files:       []File{bin},
		Entrypoint:  []string{"/pause"},
		User:        userSpec(PauseUID),
		Description: "pause: sleeps until SIGTERM or SIGINT",
	}, nil
}

// HelloWorldRef is the name the hello-world image stands in for: the
// TDSet sample's crccheck/hello-world, which names no tag, so the kubelet
// always pulls it, from the registry that imagebuild registry serves as
// docker.io's mirror.
const HelloWorldRef = "docker.io/crccheck/hello-world:latest"

// HelloWorldPort is the port the hello-world image serves HTTP on, the
// TDSet sample's container port.
const HelloWorldPort = 8000

// HelloWorldRoot is the directory the hello-world image serves.
const HelloWorldRoot = "/www"

// HelloWorldPage is the hello-world image's /www/index.html.
const HelloWorldPage = `<!DOCTYPE html>
<html>
<head><title>Hello World</title></head>
<body>
<h1>Hello World</h1>
<p>Served by busybox httpd from Debian's busybox-static package, in multi-operator's stand-in for crccheck/hello-world.</p>
</body>
</html>
`

// helloWorldScript runs busybox httpd with the script's arguments in the
// foreground, under a shell that exits on SIGTERM or SIGINT. httpd catches
// neither: as a container's process 1 it would ignore the kubelet's
// SIGTERM and stop only when the grace period ends. When the shell, process
// 1, exits, the kernel ends httpd with it. The shell gives a background
// command /dev/null as its input, which a container's /dev has.
const helloWorldScript = `trap 'exit 0' TERM INT; /bin/busybox httpd -f "$@" & wait`

// HelloWorldArgs are the hello-world image's Cmd, busybox httpd's
// arguments: in the foreground, on port 8000, serving /www. A container that
// sets args replaces them, keeping the shell that handles SIGTERM.
var HelloWorldArgs = []string{"-p", strconv.Itoa(HelloWorldPort), "-h", HelloWorldRoot}

// HelloWorld is the image that stands in for crccheck/hello-world, a small
// HTTP server on port 8000 that answers with a hello world page: Debian's
// static busybox at /bin/busybox, running httpd (see helloWorldScript and
// HelloWorldArgs), and /www/index.html. It runs as nobody (65534), the
// TDSet controller's user, and writes nothing, so a read-only root file
// system suits it.
func HelloWorld(busybox string) (Spec, error) {
	bin, err := HostFile(busybox, Busybox)
	if err != nil {
		return Spec{}, err
	}
	bin.Mode = 0o755
	files := append(accountFiles(Account{Name: "nobody", ID: HelloWorldUID, Home: "/nonexistent"}),
		bin,
		Dir(HelloWorldRoot, 0o755, 0, 0),
		Content(path.Join(HelloWorldRoot, "index.html"), 0o644, []byte(HelloWorldPage)),
	)
	return Spec{
		Files:       files,
		Entrypoint:  []string{Busybox, "sh", "-c", helloWorldScript, "httpd"},
		Cmd:         append([]string{}, HelloWorldArgs...),
		User:        userSpec(HelloWorldUID),
		Description: "busybox httpd from Debian's busybox-static package, for crccheck/hello-world",
	}, nil
}
