// Package managerproc runs bin/manager as a child process, the way a user
// runs it, for the e2e suite and the benchmark.
package managerproc

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// Process is a running manager.
type Process struct {
	// Cmd is the running command.
	Cmd *exec.Cmd
	// Log is the file that holds the manager's output.
	Log *os.File
	// ProbeAddr serves /healthz and /readyz.
	ProbeAddr string
	// MetricsAddr serves the metrics when the caller chose an address for
	// them (--metrics-bind-address) and recorded it here.
	MetricsAddr string
	// Startup is the time from exec to the first 200 from /readyz.
	Startup time.Duration
	exited  chan struct{}
}

// FreePort returns a loopback address with a port nobody listens on.
func FreePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := l.Addr().String()
	// The port is free only once the listener is closed.
	if err := l.Close(); err != nil {
		return "", err
	}
	return addr, nil
}

// Start runs bin with args plus a health-probe address of its own, and waits
// up to timeout for /readyz to answer 200. The output goes to a temporary
// file named after name.
func Start(bin, name string, args []string, timeout time.Duration) (*Process, error) {
	return StartWithEnv(bin, name, args, nil, timeout)
}

// StartWithEnv is Start with env ("KEY=value") added to this process's
// environment.
func StartWithEnv(bin, name string, args, env []string, timeout time.Duration) (*Process, error) {
	probe, err := FreePort()
	if err != nil {
		return nil, err
	}
	logFile, err := os.CreateTemp("", "manager-"+name+"-*.log")
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, append(args, "--health-probe-bind-address", probe)...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	// Killed with the test binary, so that a go test timeout or an
	// interrupt leaves no manager writing to the cluster.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	began := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{Cmd: cmd, Log: logFile, ProbeAddr: probe, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if resp, err := client.Get("http://" + probe + "/readyz"); err == nil {
			_ = resp.Body.Close() // only the status matters, not the body
			if resp.StatusCode == http.StatusOK {
				p.Startup = time.Since(began)
				return p, nil
			}
		}
		select {
		case <-p.exited:
			return nil, fmt.Errorf("manager %s exited: see %s", name, logFile.Name())
		case <-time.After(10 * time.Millisecond):
		}
	}
	p.Kill()
	return nil, fmt.Errorf("manager %s was not ready within %s: see %s", name, timeout, logFile.Name())
}

// Pid is the manager's process ID.
func (p *Process) Pid() int { return p.Cmd.Process.Pid }

// Stop ends the manager as Ctrl-C does, and kills it after 30 seconds.
func (p *Process) Stop() {
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		p.Kill()
	}
}

// Kill ends the manager at once, as a crash or an OOM kill would.
func (p *Process) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.exited
}
