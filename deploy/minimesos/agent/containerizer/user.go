package containerizer

import (
	"errors"
	"fmt"
	"os"
	"os/user"
	"strconv"
	"syscall"
)

// ErrUser: the run-as user cannot be used (unknown user, or a different user
// asked of an agent that is not root).
var ErrUser = errors.New("containerizer: run-as user")

// credential resolves name for running a process. It returns nil when no
// switch is needed (empty name, or the agent already runs as that user).
func credential(name string) (*syscall.Credential, error) {
	if name == "" {
		return nil, nil
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("%w: user %q does not exist: %v", ErrUser, name, err)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("%w: user %q: %v", ErrUser, name, err)
	}
	if int(uid) == os.Geteuid() {
		return nil, nil
	}
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: agent runs as uid %d, not root, and cannot switch to user %q", ErrUser, os.Geteuid(), name)
	}
	var groups []uint32
	if ids, err := u.GroupIds(); err == nil {
		for _, g := range ids {
			if n, err := strconv.ParseUint(g, 10, 32); err == nil {
				groups = append(groups, uint32(n))
			}
		}
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: groups}, nil
}
