package parquetfile

import (
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/task"
)

// SaveOptions say how to write Parquet.
type SaveOptions struct {
	// Compression of the pages: "snappy" (the default, as Spark's), "zstd" or "none".
	Compression string
	// RowGroupRows caps the rows of a row group (0: parquet-go's default).
	RowGroupRows int64
}

func (o SaveOptions) codec() (compress.Codec, error) {
	switch o.Compression {
	case "", "snappy":
		return &parquet.Snappy, nil
	case "zstd":
		return &parquet.Zstd, nil
	case "none", "uncompressed":
		return &parquet.Uncompressed, nil
	}
	return nil, fmt.Errorf("parquetfile: unknown compression %q (snappy, zstd or none)", o.Compression)
}

// Save writes ds as Parquet files under dir, one per partition (part-00000.parquet, …),
// through the output commit protocol of dataset.SaveAsTextFile (dataset.Overwrite replaces
// an existing output; dataset.Compress does not apply: choose o.Compression).
func Save[T any](ds dataset.Dataset[T], dir string, o SaveOptions, opts ...dataset.SaveOption) error {
	c, err := o.codec()
	return dataset.SaveFiles(ds, dataset.FileSink[T]{
		Op: "saveAsParquet", Ext: ".parquet", SelfCompressed: true,
		Write: func(w io.Writer, part func(func([]T) error) error) error {
			if err != nil {
				return task.NotRetryable(err)
			}
			wopts := []parquet.WriterOption{parquet.Compression(c)}
			if o.RowGroupRows > 0 {
				wopts = append(wopts, parquet.MaxRowsPerRowGroup(o.RowGroupRows))
			}
			pw := parquet.NewGenericWriter[T](w, wopts...)
			if err := part(func(xs []T) error { _, err := pw.Write(xs); return err }); err != nil {
				return err
			}
			return pw.Close()
		},
	}, dir, opts...)
}
