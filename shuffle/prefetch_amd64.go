package shuffle

// prefetch asks the CPU to bring the two cache lines from p into its
// caches without waiting for them (PREFETCHT0): a sorted partition's
// records are gathered from random places, and a plain load ahead would
// stall the gather on the miss it was meant to hide.
//
//go:noescape
func prefetch(p *byte)
