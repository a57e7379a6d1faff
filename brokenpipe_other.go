//go:build !unix

package flint

// brokenPipe cannot tell a broken output pipe here; SIGPIPE is unix's.
func brokenPipe(int) bool { return false }
