package redistest

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// ResetPeakRSS makes the kernel forget the server's peak resident set
// size, so that PeakRSS tells the peak of what follows (Linux: writing 5
// to /proc/<pid>/clear_refs resets VmHWM).
func (s *Server) ResetPeakRSS() error {
	if s.cmd == nil {
		return fmt.Errorf("redis-server on %s is not running", s.Addr())
	}
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", s.PID()), []byte("5"), 0o600)
}

// PeakRSS returns the server's peak resident set size in bytes since it
// started or since ResetPeakRSS (VmHWM of /proc/<pid>/status).
func (s *Server) PeakRSS() (int64, error) {
	if s.cmd == nil {
		return 0, fmt.Errorf("redis-server on %s is not running", s.Addr())
	}
	return statusKiB(fmt.Sprintf("/proc/%d/status", s.PID()), "VmHWM")
}

// statusKiB reads one "<field>: <n> kB" line of a /proc status file, in
// bytes.
func statusKiB(path, field string) (int64, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(raw), "\n") {
		name, rest, ok := strings.Cut(line, ":")
		if !ok || name != field {
			continue
		}
		kib, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%s of %s: %w", field, path, err)
		}
		return kib * 1024, nil
	}
	return 0, fmt.Errorf("%s has no %s", path, field)
}
