package grpcecho

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
)

// Env names the variables a child started by StartClients reads; a binary
// that finds EnvAddr set calls ClientMain (see MaybeClientMain).
const (
	EnvAddr   = "FLINT_GRPCECHO_ADDR"
	EnvWindow = "FLINT_GRPCECHO_WINDOW"
)

// MaybeClientMain runs ClientMain on stdin and stdout when the process was
// started by StartClients and reports whether it did; call it first thing in
// TestMain. The returned code is the process's exit code.
func MaybeClientMain() (code int, ran bool) {
	addr := os.Getenv(EnvAddr)
	if addr == "" {
		return 0, false
	}
	window, err := strconv.Atoi(os.Getenv(EnvWindow))
	if err != nil || window < 1 {
		fmt.Fprintf(os.Stderr, "grpcecho: bad %s %q\n", EnvWindow, os.Getenv(EnvWindow))
		return 2, true
	}
	if err := ClientMain(addr, window, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1, true
	}
	return 0, true
}

// Clients are echo client processes driven by the parent.
type Clients struct {
	cmds []*exec.Cmd
	ins  []io.WriteCloser
	outs []*bufio.Scanner
}

// StartClients starts n child processes of binary (usually os.Args[0], whose
// TestMain calls MaybeClientMain), each holding one stream to s with at most
// window round trips in flight.
func StartClients(binary string, s *Server, n, window int) (*Clients, error) {
	c := &Clients{}
	for range n {
		cmd := exec.Command(binary)
		cmd.Env = append(os.Environ(), EnvAddr+"="+s.Addr(), EnvWindow+"="+strconv.Itoa(window))
		cmd.Stderr = os.Stderr
		in, err := cmd.StdinPipe()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("grpcecho: stdin pipe: %w", err)
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("grpcecho: stdout pipe: %w", err)
		}
		if err := cmd.Start(); err != nil {
			c.Close()
			return nil, fmt.Errorf("grpcecho: start %s: %w", binary, err)
		}
		c.cmds, c.ins, c.outs = append(c.cmds, cmd), append(c.ins, in), append(c.outs, bufio.NewScanner(out))
	}
	return c, nil
}

// Run makes every client do perClient round trips at once and waits until
// all are done.
func (c *Clients) Run(perClient int) error {
	for _, in := range c.ins {
		if _, err := fmt.Fprintln(in, perClient); err != nil {
			return fmt.Errorf("grpcecho: command a client: %w", err)
		}
	}
	for i, out := range c.outs {
		if !out.Scan() {
			return fmt.Errorf("grpcecho: client %d ended before reporting: %w", i, errors.Join(out.Err(), io.ErrUnexpectedEOF))
		}
	}
	return nil
}

// Close ends the clients (their stdin closes) and waits for them.
func (c *Clients) Close() error {
	for _, in := range c.ins {
		_ = in.Close()
	}
	var errs []error
	for _, cmd := range c.cmds {
		if err := cmd.Wait(); err != nil {
			errs = append(errs, fmt.Errorf("grpcecho: client %d: %w", cmd.Process.Pid, err))
		}
	}
	return errors.Join(errs...)
}
