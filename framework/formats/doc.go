// Package formats owns what Flint's file formats share: the policy for malformed records
// (Mode: FailFast, DropMalformed, Permissive — Spark's FAILFAST, DROPMALFORMED and
// PERMISSIVE), the Corrupt field that holds a malformed record under Permissive, and the
// errors naming the file and line of a bad record. The formats themselves are its
// subpackages: csvfile (CSV and TSV), jsonlines (JSON lines) and parquetfile (Parquet); each
// reads into a Go struct T as a dataset.Dataset[T] from any storage scheme and writes one
// through the output commit protocol of dataset.SaveFiles.
//
// # Malformed records
//
// A record is malformed when it cannot become a T: a CSV row with too few or too many
// fields or a value that does not parse as its field's type; a JSON line that is not a JSON
// object or has a value of the wrong type. What a reader does with one is its Mode:
//
//   - FailFast (the default): the task fails, naming the file, the line and why; the job
//     fails with that error (a malformed record fails every attempt, so it is not retried).
//   - DropMalformed: the record is skipped and counted in the accumulator the options name
//     (Options.Dropped) with dataset.Accumulator's guarantees: exactly once when the read
//     is in an action's final stage (a failed or speculative attempt's count is dropped);
//     a map stage recomputed after a lost executor counts again, as in Spark.
//   - Permissive: the record becomes a T anyway — the fields that parsed set, the others
//     their zero value — and T's field of type *formats.Corrupt is set to where the record
//     is, its raw text and why it is malformed; a well-formed record has that field nil.
//     This is Spark's PERMISSIVE with its corrupt-record column, minus the nulls: a Go
//     field cannot be null, so Permissive needs T to have a *Corrupt field (planning fails
//     otherwise), and a job tells good records from bad by it, never by zero values.
//
// Line numbers count from 1 in the file (decompressed); a split starting inside a file
// counts the lines before it only when it reports a malformed record.
package formats
