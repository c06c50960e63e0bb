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
	"github.com/multi-operator/multi-operator/pkg/backupreport"
)

// backupCommand is the subcommand a RedisClusterBackup's Job runs, from
// the manager's own image: `manager backup --seeds ... --path ...`.
const backupCommand = "backup"

// restoreCommand is the subcommand a RedisCluster's restore Job runs:
// `manager restore` with the same flags as backup, reading the files back.
const restoreCommand = "restore"

// runBackup takes one backup and reports its result as the last line of
// stdout and, with --termination-log, as the termination message, which
// the controller reads from the pod's status. It exits 0 when the backup
// is complete, 1 when it failed and 2 on bad flags or input.
func runBackup(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg backupjob.Config
	return runJob(ctx, backupCommand, cachev1.ReasonBackupInvalid, &cfg, cfg.Bind,
		func(ctx context.Context, logger *slog.Logger) backupreport.Result {
			return backupjob.Run(ctx, cfg, logger)
		}, args, stdout, stderr)
}

// runRestore loads one backup into a new cluster and reports its result
// as runBackup does; Keys is how many keys were restored.
func runRestore(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	var cfg backupjob.RestoreConfig
	return runJob(ctx, restoreCommand, cachev1.ReasonRestoreInvalid, &cfg.Config, cfg.Bind,
		func(ctx context.Context, logger *slog.Logger) backupreport.Result {
			return backupjob.Restore(ctx, cfg, logger)
		}, args, stdout, stderr)
}

// runJob parses the Job's flags with bind into what cfg is part of, runs
// it, and writes its result to stdout and the termination log. A result of
// reason invalid exits 2, so that the Job's pod failure policy fails it at
// once.
func runJob(ctx context.Context, name, invalid string, cfg *backupjob.Config, bind func(*pflag.FlagSet),
	run func(context.Context, *slog.Logger) backupreport.Result, args []string, stdout, stderr io.Writer) int {
	if code, ok := parseSubcommand(name, args, stderr, bind); !ok {
		return code
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	code := 0
	res := run(ctx, logger)
	switch {
	case res.Complete:
		logger.Info(name+" complete", "path", cfg.Path, "keys", res.Keys, "bytes", res.Bytes, "shards", res.Shards)
	case res.Reason == invalid:
		logger.Error(name+" not started", "reason", res.Reason, "error", res.Message)
		code = 2
	default:
		logger.Error(name+" failed", "reason", res.Reason, "error", res.Message)
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

// backupDeleteCommand is the subcommand a deleted RedisClusterBackup's
// cleanup Job runs, from the manager's own image: `manager backup-delete
// --path <namespace>/<cluster>/<backup> ...`, with the backup's
// destination flags.
const backupDeleteCommand = "backup-delete"

// runBackupDelete removes one backup's folder. It exits 0 when the folder
// is gone (or was never there), 1 when the store failed, and 2 on bad
// flags or mounted files, which a retry cannot fix.
func runBackupDelete(ctx context.Context, args []string, stderr io.Writer) int {
	var cfg backupjob.DeleteConfig
	if code, ok := parseSubcommand(backupDeleteCommand, args, stderr, cfg.Bind); !ok {
		return code
	}
	logger := slog.New(slog.NewJSONHandler(stderr, nil))
	switch err := backupjob.Delete(ctx, cfg); {
	case err == nil:
		logger.Info("backup files removed", "path", cfg.Path)
		return 0
	case errors.Is(err, backupjob.ErrInvalid):
		logger.Error("backup files not removed", "path", cfg.Path, "error", err)
		return 2
	default:
		logger.Error("backup files not removed", "path", cfg.Path, "error", err)
		return 1
	}
}

// parseSubcommand parses a subcommand's flags, which bind defines. When it
// returns false, the subcommand exits with code: 0 after --help, 2 on bad
// flags.
func parseSubcommand(name string, args []string, stderr io.Writer, bind func(*pflag.FlagSet)) (int, bool) {
	fs := pflag.NewFlagSet(name, pflag.ContinueOnError)
	fs.SetOutput(stderr)
	bind(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0, false
		}
		return 2, false
	}
	return 0, true
}
