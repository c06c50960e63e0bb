package redistest

import (
	"syscall"
	"testing"
)

// Pause stops the server's process (SIGSTOP): its connections stay open
// and it answers nothing, as a node stalled by its host or a hostile image
// would. The returned func, which the test's end also runs, resumes it.
func (s *Server) Pause(t testing.TB) (resume func()) {
	t.Helper()
	if err := s.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatalf("pausing %s: %v", s.Addr(), err)
	}
	resume = func() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }
	t.Cleanup(resume)
	return resume
}
