package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"

	"github.com/spf13/pflag"

	cachev1 "github.com/multi-operator/multi-operator/apis/cache/v1"
	"github.com/multi-operator/multi-operator/pkg/backupjob"
)

// backupCommand is the subcommand a RedisClusterBackup's Job runs, from
// the manager's own image: `manager backup --seeds ... --path ...`.
const backupCommand = "backup"

// runBackup takes one backup and reports its result as the last line of
// stdout and, with --termination-log, as the termination message, which
// the controller reads from the pod's status. It exits 0 when the backup
// is complete, 1 when it failed and 2 on bad flags.
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := pflag.NewFlagSet(backupCommand, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	var cfg backupjob.Config
	cfg.Bind(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		return 2
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	code := 0
	res := backupjob.Run(ctx, cfg, logger)
	switch {
	case res.Complete:
		logger.Info("backup complete", "path", cfg.Path, "keys", res.Keys, "bytes", res.Bytes, "shards", res.Shards)
	case res.Reason == cachev1.ReasonBackupInvalid:
		logger.Error("backup not started", "reason", res.Reason, "error", res.Message)
		code = 2
	default:
		logger.Error("backup failed", "reason", res.Reason, "error", res.Message)
		code = 1
	}
	out := res.Encode()
	if cfg.TerminationLog != "" {
		if err := os.WriteFile(cfg.TerminationLog, out, 0o600); err != nil {
			logger.Error("cannot write the termination message", "file", cfg.TerminationLog, "error", err)
		}
	}
	if _, err := fmt.Fprintf(stdout, "%s\n", out); err != nil && code == 0 {
		code = 1
	}
	return code
}
