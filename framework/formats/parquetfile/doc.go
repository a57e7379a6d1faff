// Package parquetfile reads Parquet files into a dataset.Dataset[T] of a Go struct T (Read)
// and writes one as Parquet (Save), with github.com/parquet-go/parquet-go.
//
// parquet-go over apache/arrow-go's Parquet: it reads and writes Go structs directly
// (generic readers and writers typed by T, schema from struct tags), which is exactly a
// Dataset[T]; it reads one row group at a time from any io.ReaderAt and converts a file's
// schema to T's reading only T's column chunks (projection for free); it exposes the footer's
// row groups and their min/max statistics for planning. arrow-go reads into Arrow record
// batches, which a Dataset[T] would have to convert row by row, and brings the Arrow module's
// much larger dependency tree.
//
// # Reading
//
// The driver reads every file's footer when the job is planned (two small ranged reads per
// file) and:
//   - checks T against the file's schema: a column of T the file lacks, or has with another
//     type (or optional where T's field is not a pointer), at any depth of nested structs,
//     fails the job there, naming the file, the column's path (addr.zip) and both types; a
//     plain column where T has a struct (or the reverse) is one error at that path;
//   - skips the row groups that Options.Filter excludes by their min/max statistics;
//   - packs each file's remaining row groups, in order, into splits of at most
//     flint.files.maxPartitionBytes (their compressed size; a larger row group is a split
//     of its own). A split is one or more row groups of one file.
//
// A task reads only its row groups, and of them only T's columns (bytes of other columns are
// never fetched), through ranged reads of the storage scheme (local, http(s), s3://), failing
// when the file is no longer the version the driver listed. Options.Filter also drops the
// rows of the groups read that it excludes, so the result is exact whatever the statistics.
//
// # Writing
//
// Save writes one Parquet file per partition (part-00000.parquet) compressed with snappy or
// zstd, through the commit protocol of dataset.SaveFiles.
package parquetfile
