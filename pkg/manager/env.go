package manager

import "os"

// ImageFromEnv returns the operand image named by the environment variable
// envVar (MEMCACHED_IMAGE, ...), or def when it is unset or empty. The
// deploy components set these variables on the manager's container.
func ImageFromEnv(envVar, def string) string {
	if img := os.Getenv(envVar); img != "" {
		return img
	}
	return def
}
