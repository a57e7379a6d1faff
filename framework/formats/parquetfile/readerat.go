package parquetfile

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
)

// readerAt reads a listed file by ranged reads of its storage scheme, counting the bytes.
type readerAt struct {
	ctx  context.Context
	fs   storage.FS
	file storage.FileInfo
	read atomic.Int64
}

func openReaderAt(ctx context.Context, cfg *config.Config, f storage.FileInfo) (*readerAt, error) {
	fs, err := storage.For(ctx, cfg, f.Path)
	if err != nil {
		return nil, err
	}
	return &readerAt{ctx: ctx, fs: fs, file: f}, nil
}

func (r *readerAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.file.Size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), r.file.Size-off)
	rc, err := r.fs.Open(r.ctx, r.file, off, n)
	if err != nil {
		return 0, err
	}
	defer rc.Close()
	k, err := io.ReadFull(rc, p[:n])
	r.read.Add(int64(k))
	if err != nil {
		return k, fmt.Errorf("read %s: %w", r.file.Path, err)
	}
	if n < int64(len(p)) {
		return k, io.EOF
	}
	return k, nil
}
