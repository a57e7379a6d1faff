package dataset

// CachedInMemory is what this process's cache holds in memory: the
// storage budget's bytes in use and the partitions kept as records.
func CachedInMemory() (used int64, parts int) {
	cached.Lock()
	defer cached.Unlock()
	for _, e := range cached.m {
		if e.kept && e.recs != nil {
			parts++
		}
	}
	return cached.used, parts
}
