// Package csvfile reads CSV and TSV files into a dataset.Dataset[T] of a Go struct T
// (Read) and writes one as CSV (Save), with encoding/csv.
//
// Reading splits files as dataset.TextFile does — byte ranges of about
// flint.files.maxPartitionBytes aligned to lines, small files packed, compressed files
// (.gz, .zst, .bz2, .xz) whole — on any storage scheme (local, http(s), s3://). A record is a
// line, so a quoted field cannot hold a line break (Spark's CSV reader without multiLine
// has the same rule); such a row is malformed. T's fields are matched to columns by header
// name (Options.Header: the driver reads each file's header at planning, and a split that
// starts inside a file knows its columns from it) or by position. A malformed row — a wrong
// number of fields, a value that does not parse — is handled by Options.Mode: fail naming
// the file and line, drop and count, or keep marked (package formats).
//
// Save writes through the commit protocol of dataset.SaveFiles: one part file per
// partition, published by the driver only when the job succeeds, _SUCCESS last. Writing
// what Read reads back: a value with a line break is written quoted across two lines, which
// Read then rejects as malformed rather than misreading it.
package csvfile
