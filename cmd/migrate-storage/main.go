// Command migrate-storage rewrites every object of some CRDs in their
// storage version and then trims each CRD's status.storedVersions to that
// version, after an upgrade that changed the storage version (TDSet: from a
// release that stored schedule.rs/v1 to one that stores v2). It is the step
// the StorageVersionMigration API (storagemigration.k8s.io) does on clusters
// that have it; see pkg/storageversion.
//
// Run it after the new CRDs are applied and while the manager, which serves
// the conversion webhook, runs:
//
//	migrate-storage [--kubeconfig FILE] [--crd tdsets.schedule.rs]...
//
// It prints one line per CRD and exits 1 on the first error. Running it
// again is safe.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"
	uberzap "go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client/config"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/multi-operator/multi-operator/pkg/storageversion"
)

// defaultCRDs are the project's CRDs whose storage version changed.
var defaultCRDs = []string{"tdsets.schedule.rs"}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr, config.GetConfig)
	stop()
	os.Exit(code)
}

// run parses args, migrates each CRD and returns the exit code: 0 when
// every CRD is migrated, 1 on an error, 2 for bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer, getConfig func() (*rest.Config, error)) int {
	fs := pflag.NewFlagSet("migrate-storage", pflag.ContinueOnError)
	fs.SetOutput(stderr)
	crds := fs.StringArray("crd", defaultCRDs, "Name of a CRD whose objects to rewrite in its storage version, such as tdsets.schedule.rs; repeatable.")
	// Readable lines on stderr by default, at info level: the summary
	// lines go to stdout.
	zapOpts := zap.Options{NewEncoder: consoleEncoder}
	// controller-runtime's --kubeconfig and zap's flags live on Go's flag
	// package; bridge them.
	goFlags := flag.NewFlagSet("migrate-storage", flag.ContinueOnError)
	config.RegisterFlags(goFlags)
	zapOpts.BindFlags(goFlags)
	fs.AddGoFlagSet(goFlags)
	fs.Usage = func() {
		printf(stderr, "Usage: migrate-storage [flags]\n\n"+
			"Rewrites every object of each CRD in the CRD's storage version, then sets its\n"+
			"status.storedVersions to that version alone. Run it after an upgrade that\n"+
			"changed a storage version, while the conversion webhook is served.\n\n"+
			"The cluster is --kubeconfig's, else $KUBECONFIG's, else the in-cluster one,\n"+
			"else ~/.kube/config's.\n\nFlags:\n%s", fs.FlagUsages())
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		printf(stderr, "migrate-storage: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		printf(stderr, "migrate-storage: unexpected arguments: %s\n", strings.Join(fs.Args(), " "))
		return 2
	}
	log := zap.New(zap.UseFlagOptions(&zapOpts), zap.WriteTo(stderr))

	cfg, err := getConfig()
	if err != nil {
		printf(stderr, "migrate-storage: loading the cluster's config: %v\n", err)
		return 1
	}
	for _, name := range *crds {
		res, err := storageversion.Migrate(ctx, cfg, name, log)
		if err != nil {
			printf(stderr, "migrate-storage: %v\n", err)
			printf(stderr, "migrate-storage: %s: status.storedVersions left as it was; running again is safe\n", name)
			return 1
		}
		printf(stdout, "%s\n", summary(res))
	}
	return 0
}

// summary is the line printed for one CRD, such as
// "tdsets.schedule.rs: rewrote 3 objects in v2; storedVersions [v2]".
func summary(res storageversion.Result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: rewrote %d %s in %s", res.CRD, res.Migrated, plural(res.Migrated, "object", "objects"), res.StorageVersion)
	if res.Unchanged > 0 {
		fmt.Fprintf(&b, " (%d already stored in it)", res.Unchanged)
	}
	if res.Gone > 0 {
		fmt.Fprintf(&b, ", %d deleted meanwhile", res.Gone)
	}
	fmt.Fprintf(&b, "; storedVersions [%s]", strings.Join(res.StoredVersions, " "))
	return b.String()
}

// consoleEncoder is zap's console encoder with production settings.
func consoleEncoder(opts ...zap.EncoderConfigOption) zapcore.Encoder {
	cfg := uberzap.NewProductionEncoderConfig()
	cfg.EncodeTime = zapcore.RFC3339TimeEncoder
	for _, o := range opts {
		o(&cfg)
	}
	return zapcore.NewConsoleEncoder(cfg)
}

// printf writes to the command's output, where a failed write has nowhere
// better to be reported.
func printf(w io.Writer, format string, args ...any) {
	_, _ = fmt.Fprintf(w, format, args...)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
