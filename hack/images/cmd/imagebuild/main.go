// Command imagebuild builds the project's container images with no Docker
// engine and no base image (see package hack/images) and writes each as a
// docker-archive tarball for `ctr -n k8s.io images import`.
//
//	imagebuild build-manager -o FILE [-go GO] [-module DIR] [-arch GOARCH]
//	imagebuild manager   -name REF -out FILE -binary FILE [-ca FILE]
//	imagebuild manager-index -name REF -out DIR [-ca FILE] BINARY...
//	imagebuild redis     -name REF -out FILE [-binary /usr/bin/redis-server] [-cli /usr/bin/redis-cli]
//	imagebuild memcached -name REF -out FILE [-binary /usr/bin/memcached]
//	imagebuild whalesay  -name REF -out FILE [-cowsay FILE] [-cows DIR] [-locale DIR]
//	imagebuild pause     -name REF -out FILE -src pause.c
//	imagebuild redis-exporter -name REF -out FILE -binary FILE
//	imagebuild hello-world -name REF -out FILE [-busybox /bin/busybox]
//	imagebuild inspect   -name REF FILE
//	imagebuild registry  [-addr 127.0.0.1:5000] [-pidfile FILE] TARBALL...
//
// build-manager builds the manager's static binary as the Dockerfile does
// and leaves FILE untouched when the bytes did not change. manager-index
// writes one image per binary (linux/amd64, linux/arm64: read from each
// binary) and their index as an OCI image layout folder. The image
// commands take -epoch, the build's time in seconds (default
// $SOURCE_DATE_EPOCH, else 0): every file's modification time and the
// image's creation time, so the same inputs give the same digest.
//
// registry serves an OCI distribution registry, in memory, on a loopback
// address (it refuses any other), holding every tagged image of the
// tarballs at the path a mirror of its registry is asked for it:
// docker.io/crccheck/hello-world:latest at
// /v2/crccheck/hello-world/manifests/latest, redis:7 under
// /v2/library/redis/. Once it answers, it prints one line starting with
// "registry ready" and writes its pid to -pidfile; it stops on SIGTERM or
// SIGINT, removes the pid file and exits 0.
package main

import (
	"archive/tar"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/multi-operator/multi-operator/hack/images"
)

// usage is printed for a missing or unknown command.
const usage = `usage: imagebuild COMMAND [flags]

commands:
  build-manager  build the manager's static binary (-o FILE)
  manager        the manager's image from its binary (-binary FILE)
  manager-index  the manager's multi-platform index from its binaries, as an OCI image layout
  redis          redis-server's image, with redis-cli, from Debian's redis-server and redis-tools packages
  memcached      memcached's image from Debian's memcached package
  whalesay       cowsay's image from Debian's cowsay package
  pause          the pause image from pause.c (-src FILE), built with gcc -static
  redis-exporter redis_exporter's image from its static binary (-binary FILE, make builds it)
  hello-world    busybox httpd on port 8000 from Debian's busybox-static package
  inspect        print the digest, config and files of a tarball
  registry       serve tarballs' images from a registry on a loopback address

Run imagebuild COMMAND -h for its flags.`

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "imagebuild:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, usage)
		return errors.New("no command")
	}
	cmd, args := args[0], args[1:]
	fs := flag.NewFlagSet("imagebuild "+cmd, flag.ContinueOnError)
	switch cmd {
	case "build-manager":
		out := fs.String("o", "", "the binary to write")
		goTool := fs.String("go", "go", "the go command")
		module := fs.String("module", ".", "the main module's directory")
		arch := fs.String("arch", "", "the GOARCH to build for (default this machine's)")
		if err := parse(fs, args); err != nil {
			return err
		}
		if *out == "" {
			return errors.New("build-manager needs -o")
		}
		start := time.Now()
		changed, err := images.BuildManager(ctx, *goTool, *module, *out, *arch)
		if err != nil {
			return err
		}
		state := "unchanged"
		if changed {
			state = "updated"
		}
		_, err = fmt.Fprintf(stdout, "%s %s (CGO_ENABLED=0 go build %s) in %s\n", *out, state,
			strings.Join(images.ManagerBuildFlags, " "), time.Since(start).Round(100*time.Millisecond))
		return err
	case "inspect":
		ref := fs.String("name", "", "the image's name in the tarball")
		if err := parse(fs, args); err != nil {
			return err
		}
		if *ref == "" || fs.NArg() != 1 {
			return errors.New("inspect needs -name and one tarball")
		}
		return inspect(fs.Arg(0), *ref, stdout)
	case "manager-index":
		ref := fs.String("name", "", "the index's name, such as localhost/multi-operator:v1.2.3")
		out := fs.String("out", "", "the OCI image layout folder to write")
		ca := fs.String("ca", images.CABundle, "the CA bundle")
		epoch := fs.String("epoch", os.Getenv("SOURCE_DATE_EPOCH"), "the build's time, seconds since 1970 (default $SOURCE_DATE_EPOCH, else 0)")
		if err := parse(fs, args); err != nil {
			return err
		}
		if *ref == "" || *out == "" || fs.NArg() == 0 {
			return errors.New("manager-index needs -name, -out and the manager's binaries, one per platform")
		}
		created, err := images.ParseEpoch(*epoch)
		if err != nil {
			return err
		}
		return managerIndex(*ref, *out, *ca, created, fs.Args(), stdout)
	case "registry":
		addr := fs.String("addr", images.DefaultRegistryAddr, "the loopback host:port to listen on (port 0: any free port)")
		pidFile := fs.String("pidfile", "", "the file to write the process id to once the registry answers")
		if err := parse(fs, args); err != nil {
			return err
		}
		return serveRegistry(ctx, *addr, *pidFile, fs.Args(), stdout)
	}

	ref := fs.String("name", "", "the image's name, such as localhost/redis:7.0.15")
	out := fs.String("out", "", "the tarball to write")
	epoch := fs.String("epoch", os.Getenv("SOURCE_DATE_EPOCH"), "the build's time, seconds since 1970 (default $SOURCE_DATE_EPOCH, else 0)")
	var build func() (images.Spec, error)
	// cleanup removes what build made for the layer, once it is written.
	var cleanup []func()
	defer func() {
		for _, f := range cleanup {
			f()
		}
	}()
	switch cmd {
	case "manager":
		binary := fs.String("binary", "", "the manager's static binary (imagebuild build-manager)")
		ca := fs.String("ca", images.CABundle, "the CA bundle")
		build = func() (images.Spec, error) {
			if *binary == "" {
				return images.Spec{}, errors.New("manager needs -binary")
			}
			return images.Manager(*binary, *ca)
		}
	case "redis":
		binary := fs.String("binary", images.RedisServer, "redis-server")
		cli := fs.String("cli", images.RedisCLI, "redis-cli (Debian's redis-tools package)")
		build = func() (images.Spec, error) { return images.Redis(ctx, *binary, *cli) }
	case "memcached":
		binary := fs.String("binary", images.MemcachedBinary, "memcached")
		build = func() (images.Spec, error) { return images.Memcached(ctx, *binary) }
	case "whalesay":
		cowsay := fs.String("cowsay", images.Cowsay, "the cowsay script")
		cows := fs.String("cows", images.CowsDir, "the cow files")
		locale := fs.String("locale", images.UTF8Locale, "the C.UTF-8 locale's directory")
		build = func() (images.Spec, error) { return images.Whalesay(ctx, *cowsay, *cows, *locale) }
	case "hello-world":
		busybox := fs.String("busybox", images.Busybox, "the static busybox")
		build = func() (images.Spec, error) { return images.HelloWorld(*busybox) }
	case "redis-exporter":
		binary := fs.String("binary", "", "redis_exporter's static binary (bin/redis_exporter-<version>/redis_exporter)")
		build = func() (images.Spec, error) {
			if *binary == "" {
				return images.Spec{}, errors.New("redis-exporter needs -binary")
			}
			return images.RedisExporter(*binary)
		}
	case "pause":
		src := fs.String("src", "hack/images/pause/pause.c", "the pause program's C source")
		build = func() (images.Spec, error) {
			dir, err := os.MkdirTemp("", "pause-")
			if err != nil {
				return images.Spec{}, err
			}
			cleanup = append(cleanup, func() { _ = os.RemoveAll(dir) })
			bin := filepath.Join(dir, "pause")
			if err := images.BuildPause(ctx, *src, bin); err != nil {
				return images.Spec{}, err
			}
			return images.Pause(bin)
		}
	default:
		fmt.Fprintln(os.Stderr, usage)
		return fmt.Errorf("unknown command %q", cmd)
	}
	if err := parse(fs, args); err != nil {
		return err
	}
	if *ref == "" || *out == "" {
		return fmt.Errorf("%s needs -name and -out", cmd)
	}
	created, err := images.ParseEpoch(*epoch)
	if err != nil {
		return err
	}
	start := time.Now()
	spec, err := build()
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	spec.Created = created
	img, err := images.Build(spec)
	if err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	if err := images.WriteTarball(*out, *ref, img); err != nil {
		return fmt.Errorf("%s: %w", cmd, err)
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	fi, err := os.Stat(*out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: %s %s, %.1f MB, built in %s\n", *out, *ref, digest,
		float64(fi.Size())/(1<<20), time.Since(start).Round(100*time.Millisecond))
	return err
}

// managerIndex writes the manager's image for each binary (its platform
// read from the binary) and their index, as an OCI image layout in out,
// and prints the index's digest and each platform's.
func managerIndex(ref, out, ca string, created time.Time, binaries []string, stdout io.Writer) error {
	start := time.Now()
	imgs := make([]v1.Image, 0, len(binaries))
	for _, bin := range binaries {
		spec, err := images.Manager(bin, ca)
		if err != nil {
			return fmt.Errorf("manager-index: %w", err)
		}
		spec.Created = created
		img, err := images.Build(spec)
		if err != nil {
			return fmt.Errorf("manager-index: %w", err)
		}
		imgs = append(imgs, img)
	}
	idx, err := images.Index(imgs...)
	if err != nil {
		return fmt.Errorf("manager-index: %w", err)
	}
	if err := images.WriteLayout(out, ref, idx); err != nil {
		return fmt.Errorf("manager-index: %w", err)
	}
	digest, err := idx.Digest()
	if err != nil {
		return err
	}
	m, err := idx.IndexManifest()
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(stdout, "%s: %s %s, built in %s\n", out, ref, digest, time.Since(start).Round(100*time.Millisecond)); err != nil {
		return err
	}
	for _, d := range m.Manifests {
		if _, err := fmt.Fprintf(stdout, "  %s %s\n", d.Platform, d.Digest); err != nil {
			return err
		}
	}
	return nil
}

// serveRegistry serves the images of the tarballs on the loopback address
// addr until ctx is done or SIGTERM or SIGINT comes (see the package's
// doc). Requests are logged to stderr.
func serveRegistry(ctx context.Context, addr, pidFile string, tarballs []string, stdout io.Writer) (err error) {
	start := time.Now()
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	// Refuse a wrong address before reading the tarballs, and hold the
	// port while loading: nothing answers until every image is in.
	ln, err := images.ListenLoopback(addr)
	if err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	defer ln.Close() //nolint:errcheck // Serve closes it first
	reg := images.NewRegistry(log.New(os.Stderr, "registry: ", log.LstdFlags))
	for _, file := range tarballs {
		imgs, err := images.TarballImages(file)
		if err != nil {
			return fmt.Errorf("registry: %w", err)
		}
		if err := reg.Load(ctx, imgs...); err != nil {
			return fmt.Errorf("registry: %s: %w", file, err)
		}
	}
	serving, cancel := context.WithCancel(ctx)
	defer cancel()
	served := make(chan error, 1)
	go func() { served <- reg.Serve(serving, ln) }()
	if pidFile != "" {
		if err := images.WritePIDFile(pidFile); err != nil {
			cancel()
			return errors.Join(fmt.Errorf("registry: %w", err), <-served)
		}
		defer func() {
			if rerr := images.RemovePIDFile(pidFile); rerr != nil {
				err = errors.Join(err, rerr)
			}
		}()
	}
	loaded := reg.Loaded()
	if len(loaded) == 0 {
		loaded = []string{"no image"}
	}
	if _, err := fmt.Fprintf(stdout, "registry ready on http://%s in %s, pid %d, serving %s\n", ln.Addr(),
		time.Since(start).Round(time.Millisecond), os.Getpid(), strings.Join(loaded, ", ")); err != nil {
		return err
	}
	if err := <-served; err != nil {
		return fmt.Errorf("registry: %w", err)
	}
	_, err = fmt.Fprintf(stdout, "registry on http://%s stopped\n", ln.Addr())
	return err
}

// parse parses a command's flags; -h prints them and stops.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		return err
	}
	return nil
}

// inspect prints the digest, the config and the files of the image ref in
// the tarball file.
func inspect(file, ref string, w io.Writer) error {
	img, err := images.ReadTarball(file, ref)
	if err != nil {
		return err
	}
	digest, err := img.Digest()
	if err != nil {
		return err
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return err
	}
	config, err := json.MarshalIndent(struct {
		Created      v1.Time
		Architecture string
		Config       v1.Config
	}{cf.Created, cf.Architecture, cf.Config}, "", "  ")
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "%s %s\n%s\n", ref, digest, config); err != nil {
		return err
	}
	rc := mutate.Extract(img)
	defer rc.Close() //nolint:errcheck // read only
	tr := tar.NewReader(rc)
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintf(w, "%s %5d:%-5d %10d /%s\n", hdr.FileInfo().Mode().String(), hdr.Uid, hdr.Gid, hdr.Size, hdr.Name); err != nil {
			return err
		}
	}
}
