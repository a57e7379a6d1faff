//go:build !amd64

package shuffle

// prefetch does nothing where no assembly version exists.
func prefetch(*byte) {}
