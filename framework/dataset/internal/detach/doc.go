// Package detach copies the strings a record holds by value, so that a record
// kept long after it was made holds only its own bytes.
//
// Why: a TextFile line is a string over the 256 KiB chunk it was read into
// (one allocation per chunk, none per line), and a substring of a line shares
// the line's bytes. A record kept after its task — a persisted partition in
// memory — keeps every chunk its strings point into, up to 256 KiB per kept
// line, none of it counted by the storage budget, whose estimate is the
// records' encoded size. Detaching the kept records makes the memory they
// hold the bytes they show, as in Spark, where each line is its own String
// (docs/benchmarks.md, issue 25).
//
// What is copied: every string reachable by value from the record — the
// record itself when it is a string, the fields of structs, the elements of
// arrays and the elements of slices, nested to any depth. A slice that holds
// strings gets a new backing array of its length (its elements detached):
// the old array may be shared with other records or with the caller's data,
// which must not be written. Slices that hold no strings ([]byte, []int) are
// left as they are: they are the user's own arrays, not windows into a
// reader's buffer.
//
// What is left: pointers, maps, interfaces, channels and functions are not
// followed. What they point to may be shared with other records or with the
// caller (copying it would mean writing shared memory, or deep-copying a
// graph with its aliasing and cycles), and an interface's dynamic type is
// only known per value, so following it would cost reflection per record.
// A record that keeps a TextFile line behind one of them keeps its chunk;
// strings.Clone it before it goes there.
//
// How: the function detaches a batch of records (as a task emits them, up
// to 1024) and copies all the batch's strings into one allocation of exactly
// their bytes. The records of a persisted partition are kept and dropped
// together, so sharing that allocation keeps nothing alive they do not show;
// one allocation per batch instead of one per string (strings.Clone) is what
// makes it cheap (docs/benchmarks.md: about a third of the CPU that cloning
// each line cost). A string taken out of a cached partition and kept beyond
// it keeps its batch's bytes, at most a batch of kept records, not a reader's
// chunk.
//
// Cost: the plan for a type is built once, by reflection, and cached; a type
// that holds no strings gets no function (no per-record work); a string
// record costs a copy of its bytes; other types walk precomputed field
// offsets twice (count, then copy) without reflection, which is used only to
// allocate a slice's new array.
//
// One owner: framework/dataset's cache (fill) is the only caller; it
// detaches only records it keeps in memory, never those it hands on or
// writes to disk.
package detach
