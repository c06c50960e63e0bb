package redistest

import (
	"syscall"
	"testing"
)

// Pause stops the server's process (SIGSTOP) until the test ends: its
// connections stay open and it answers nothing, as a node stalled by its
// host or a hostile image would.
func (s *Server) Pause(t testing.TB) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("pausing %s: %v", s.Addr(), err)
	}
	t.Cleanup(func() { _ = s.cmd.Process.Signal(syscall.SIGCONT) })
}
