//go:build unix

package flint

import "golang.org/x/sys/unix"

// brokenPipe reports whether fd is the write end of a pipe (or a socket)
// whose reader went away: poll(2) says POLLERR (a pipe without readers)
// or POLLHUP. A SIGPIPE alone does not say that, since a write to any
// broken socket of the process (an executor's connection, an HTTP
// client's) raises it too once SIGPIPE is notified.
func brokenPipe(fd int) bool {
	p := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLOUT}}
	n, err := unix.Poll(p, 0)
	return err == nil && n == 1 && p[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0
}
