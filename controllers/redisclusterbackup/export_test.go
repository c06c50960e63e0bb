package redisclusterbackup

import "time"

// SetInputRetry makes waiting backups look again after d, until the
// returned function restores the default.
func SetInputRetry(d time.Duration) (restore func()) {
	old := inputRetry
	inputRetry = d
	return func() { inputRetry = old }
}
