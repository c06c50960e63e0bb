// Command manager runs the multi-operator controllers selected by
// --controllers in one controller-manager process.
package main

import (
	"context"
	"io"
	"os"

	ctrl "sigs.k8s.io/controller-runtime"
)

func main() {
	os.Exit(run(ctrl.SetupSignalHandler(), os.Args[1:], os.Stderr))
}

// run keeps main testable: it returns the exit code instead of exiting.
func run(ctx context.Context, args []string, stderr io.Writer) int {
	if len(args) > 0 && args[0] == memcachedExporterCommand {
		return runMemcachedExporter(ctx, args[1:], stderr)
	}
	if len(args) > 0 && args[0] == backupCommand {
		return runBackup(ctx, args[1:], os.Stdout, stderr)
	}
	if len(args) > 0 && args[0] == backupDeleteCommand {
		return runBackupDelete(ctx, args[1:], stderr)
	}
	if len(args) > 0 && args[0] == restoreCommand {
		return runRestore(ctx, args[1:], os.Stdout, stderr)
	}
	opts, code := parseFlags(args, stderr)
	if opts == nil {
		return code
	}
	return opts.start(ctx, stderr)
}
