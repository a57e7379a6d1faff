package flint

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
)

// Exit codes of a Flint command (Main, Execute, the flint CLI).
const (
	ExitOK     = 0
	ExitFailed = 1 // the job (or the command) failed
	ExitUsage  = 2 // bad flags, arguments or configuration; nothing ran
	// An interrupted run exits with 128 + the signal's number, as shells
	// report it: 130 after SIGINT, 143 after SIGTERM, 141 after SIGPIPE
	// (its stdout or stderr was a pipe whose reader went away, as in
	// `flint submit … | head -1`): the job's context was cancelled and the
	// driver stopped its framework first.
)

// UsageError is a mistake on the command line or in the configuration: the
// command prints it with a pointer to Help and exits with ExitUsage.
type UsageError struct {
	Err  error
	Help string // e.g. "flint submit --help"; "" for none
}

func (e *UsageError) Error() string { return e.Err.Error() }

// Unwrap returns the mistake.
func (e *UsageError) Unwrap() error { return e.Err }

// Usage wraps err as a UsageError pointing at help (err nil: nil).
func Usage(err error, help string) error {
	if err == nil {
		return nil
	}
	var u *UsageError
	if errors.As(err, &u) {
		return err
	}
	return &UsageError{Err: err, Help: help}
}

// InterruptedError is a run ended by a signal (SIGINT, SIGTERM, SIGPIPE): the job's
// context was cancelled, running tasks were killed and the driver stopped.
type InterruptedError struct {
	Signal os.Signal
	Err    error // what the job returned after its context ended (may be nil)
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted by %s; running tasks were killed", signalName(e.Signal))
}

// Unwrap returns what the job returned.
func (e *InterruptedError) Unwrap() error { return e.Err }

func signalName(s os.Signal) string {
	switch s {
	case os.Interrupt:
		return "SIGINT"
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGPIPE:
		return "SIGPIPE (the reader of its output went away)"
	}
	return fmt.Sprint(s)
}

// userMessage is an error whose message is complete on its own (it names
// what failed and what to do): Report prints it instead of the chain of
// errors wrapping it.
type userMessage interface {
	error
	UserMessage() string
}

// ExitCode is the exit code for err: 0 for nil, ExitUsage for a
// UsageError, 128+signal for an InterruptedError, a child job binary's own
// code for its *exec.ExitError, else ExitFailed.
func ExitCode(err error) int {
	var (
		usage *UsageError
		intr  *InterruptedError
		child *exec.ExitError
	)
	switch {
	case err == nil:
		return ExitOK
	case errors.As(err, &intr):
		if s, ok := intr.Signal.(syscall.Signal); ok {
			return 128 + int(s)
		}
		return ExitFailed
	case errors.As(err, &usage):
		return ExitUsage
	case errors.As(err, &child):
		if c := child.ExitCode(); c > 0 {
			return c
		}
		return ExitFailed
	}
	return ExitFailed
}

// Report prints err once to w, prefixed with prog, and returns its exit
// code. A usage error adds a pointer to its help; a child job binary's
// failure prints nothing (the child printed its own error).
func Report(w io.Writer, prog string, err error) int {
	code := ExitCode(err)
	if err == nil {
		return code
	}
	var child *exec.ExitError
	var reported *reportedError
	if errors.As(err, &child) && child.ExitCode() > 0 || errors.As(err, &reported) {
		return code
	}
	msg := strings.TrimRight(err.Error(), "\n")
	var um userMessage
	if errors.As(err, &um) {
		msg = um.UserMessage()
	}
	fmt.Fprintf(w, "%s: %s\n", prog, msg)
	var usage *UsageError
	if errors.As(err, &usage) && usage.Help != "" {
		fmt.Fprintf(w, "Run '%s' for usage.\n", usage.Help)
	}
	return code
}
