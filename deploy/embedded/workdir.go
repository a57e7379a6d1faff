package embedded

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Work directories of the embedded master: each driver makes its own under
// the system temp dir, named TempPrefix…, holding an owner file with the
// driver's pid and process start time. A driver removes its directory when
// it stops, unless an executor or task failed (then it keeps it, with a
// KeptFile, and says where); a driver that died (SIGKILL) cannot, so the
// next driver removes directories whose owner is gone and that were not
// kept, and `flint mesos gc` removes every directory whose owner is gone.
const (
	TempPrefix = "flint-embedded-"
	// LocalPrefix names the work directories of `flint mesos local`
	// instances, owned and collected the same way.
	LocalPrefix = "flint-mesos-local-"
	ownerFile   = "OWNER"
	// KeptFile marks a directory kept for debugging after a failure.
	KeptFile = "KEPT"
)

// claimWorkDir makes a fresh temporary work directory owned by this process.
func claimWorkDir(tmp string) (string, error) { return ClaimWorkDir(tmp, TempPrefix) }

// ClaimWorkDir makes a fresh directory tmp/prefix… owned by this process
// (prefix TempPrefix or LocalPrefix), which GC removes once the process is
// gone.
func ClaimWorkDir(tmp, prefix string) (string, error) {
	dir, err := os.MkdirTemp(tmp, prefix)
	if err != nil {
		return "", err
	}
	start, err := procStart(os.Getpid())
	if err != nil {
		start = "?"
	}
	if err := os.WriteFile(filepath.Join(dir, ownerFile), []byte(fmt.Sprintf("%d %s\n", os.Getpid(), start)), 0o644); err != nil {
		os.RemoveAll(dir)
		return "", err
	}
	return dir, nil
}

// procStart is the process's start time in clock ticks since boot (field
// 22 of /proc/PID/stat), which tells a pid's reuse from its first owner.
func procStart(pid int) (string, error) {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return "", err
	}
	s := string(b)
	end := strings.LastIndexByte(s, ')') // the command may contain spaces
	if end < 0 {
		return "", errors.New("embedded: malformed /proc stat")
	}
	f := strings.Fields(s[end+1:])
	if len(f) < 20 {
		return "", errors.New("embedded: short /proc stat")
	}
	return f[19], nil
}

// ownerAlive reports whether the driver that made dir still runs. A
// directory without a readable owner file counts as alive (it may be being
// made, or not be ours).
func ownerAlive(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return true
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return true
	}
	pid, err := strconv.Atoi(f[0])
	if err != nil {
		return true
	}
	start, err := procStart(pid)
	return err == nil && start == f[1]
}

// GC removes the embedded (and `flint mesos local`) work directories under
// tmp whose process is gone;
// with kept false it leaves those kept after a failure. It returns the
// directories removed.
func GC(tmp string, kept bool) ([]string, error) {
	entries, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("embedded: gc: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), TempPrefix) && !strings.HasPrefix(e.Name(), LocalPrefix) {
			continue
		}
		dir := filepath.Join(tmp, e.Name())
		if ownerAlive(dir) {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, KeptFile)); err == nil && !kept {
			continue
		}
		if err := os.RemoveAll(dir); err != nil {
			errs = append(errs, fmt.Errorf("embedded: gc: %w", err))
			continue
		}
		removed = append(removed, dir)
	}
	return removed, errors.Join(errs...)
}
