package dataset

// CachedInMemory is what the cache of b's Context holds in memory in this
// process (local mode's executor): the storage budget's bytes in use and
// the partitions kept as records.
func CachedInMemory(b *Builder) (used int64, parts int) {
	cached := &b.st.cache
	cached.Lock()
	defer cached.Unlock()
	for _, e := range cached.m {
		if e.kept && e.recs != nil {
			parts++
		}
	}
	return cached.used, parts
}
