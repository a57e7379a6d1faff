package dataset

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/framework/storage/codec"
)

// This file is the seam file formats plug into (packages under framework/formats: CSV, JSON
// lines, Parquet): a typed source planned on the driver from the listed files and read by
// tasks split by split (ReadFiles), and a sink writing one part file per partition through
// the output commit protocol of SaveAsTextFile (SaveFiles).

// FilePart is a byte range [Start, End) of one listed file; a compressed file's part is the
// whole file.
type FilePart struct {
	File       storage.FileInfo
	Start, End int64
}

// FileSplit is what one task of a line-oriented file source reads: one range of a large
// file, or several small files packed together, and the hosts that hold its bytes.
type FileSplit struct {
	Parts []FilePart
	Hosts []string
}

// FilePlanInput is what a format's planner gets on the driver: the listed files (sizes and
// versions), the job's configuration and the split sizing (flint.files.maxPartitionBytes,
// flint.files.openCostInBytes).
type FilePlanInput struct {
	Ctx               context.Context
	Config            *config.Config
	Files             []storage.FileInfo
	MaxPartitionBytes int64
	OpenCostInBytes   int64
}

// LineSplits packs the files into splits as TextFile does: an uncompressed file larger than
// MaxPartitionBytes is cut into byte ranges (a line belongs to the range its first byte is
// in), compressed files are read whole, small files are packed together. A local-disk
// file's split prefers the driver's host.
func (in FilePlanInput) LineSplits() []FileSplit {
	var out []FileSplit
	for _, s := range packSplits(in.Files, in.MaxPartitionBytes, in.OpenCostInBytes, fileHosts) {
		fs := FileSplit{Hosts: s.Hosts}
		for _, p := range s.Parts {
			fs.Parts = append(fs.Parts, FilePart(p))
		}
		out = append(out, fs)
	}
	return out
}

// FileHosts is where the driver knows a file's bytes to be: the driver's host for a file on
// its local disk, none for an object store.
func FileHosts(path string) []string { return fileHosts(path) }

// FileSource is a file format's typed reader. S is its split (gob-encodable: the driver's
// plan is frozen with the job and sent to executors).
type FileSource[T, S any] struct {
	// Op names the source in the job's graph and errors ("csvFile").
	Op string
	// Plan runs once, on the driver, when the job is planned. An error fails the job before
	// any task runs.
	Plan func(in FilePlanInput) ([]S, error)
	// Hosts is where a split's bytes are (nil: no preference).
	Hosts func(S) []string
	// Read emits a split's records in batches; ctx is the task's (its configuration and
	// credentials, its metrics: task.MetricsFrom).
	Read func(ctx context.Context, s S, emit func([]T) error) error
}

// ReadFiles is the dataset of src over the files at paths (listed on the driver as TextFile
// lists them: files, directories and key prefixes, globs, any storage scheme); one
// partition per split src.Plan makes.
func ReadFiles[T, S any](b *Builder, src FileSource[T, S], paths ...string) Dataset[T] {
	info := b.newInfo(src.Op, typeName[T](), 0, nil, nil)
	var plan struct {
		Splits []S
		Err    string
	}
	b.freeze("splits:"+string(info.id), func() any {
		s, err := planSource(b, src, absInputs(paths))
		if err != nil {
			return struct {
				Splits []S
				Err    string
			}{Err: err.Error()}
		}
		return struct {
			Splits []S
			Err    string
		}{Splits: s}
	}, &plan)
	splits, planErr := plan.Splits, plan.Err
	info.parts = len(splits)
	if src.Hosts != nil {
		var fs []fileSplit
		for _, s := range splits {
			fs = append(fs, fileSplit{Hosts: src.Hosts(s)})
		}
		info.preferred = filePreferences(fs)
	}
	n := &tnode[T]{nodeInfo: info}
	n.compute = func(tc *taskContext, p int, emit func([]T) error) error {
		if planErr != "" {
			return errors.New(planErr)
		}
		ctx := tc.ctx
		if ctx == nil {
			ctx = context.Background()
		}
		return src.Read(ctx, splits[p], emit)
	}
	if planErr != "" {
		b.fail(errors.New(planErr))
	}
	b.add(n)
	return Dataset[T]{n}
}

// planSource lists paths and runs src's planner.
func planSource[T, S any](b *Builder, src FileSource[T, S], paths []string) ([]S, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("dataset: %s needs at least one path", src.Op)
	}
	ctx := context.Background()
	files, err := storage.Expand(ctx, b.config(), paths)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	return src.Plan(FilePlanInput{Ctx: ctx, Config: b.config(), Files: files,
		MaxPartitionBytes: b.settings.MaxPartitionBytes, OpenCostInBytes: b.settings.OpenCostInBytes})
}

// LineRange is an open part of a file for a line-oriented format: R starts at the first line
// that starts in the part (a decompressed file: at its start), which is at byte Offset of
// the file (decompressed). The records that start before End belong to the part; R goes on
// past End (one more request) for the caller to finish the last one.
type LineRange struct {
	R      *bufio.Reader
	Offset int64
	End    int64
	rc     io.ReadCloser
}

// Close releases the range's connection or file.
func (l *LineRange) Close() error { return l.rc.Close() }

// OpenLineRange opens p with cfg's storage settings and credentials (nil: the task's that
// ctx carries). It fails with a storage error naming the file when the file is not the
// version the driver listed.
func OpenLineRange(ctx context.Context, cfg *config.Config, p FilePart) (*LineRange, error) {
	if cfg == nil {
		cfg = framework.TaskConfig(ctx)
	}
	rc, err := openPartWith(ctx, cfg, filePart(p))
	if err != nil {
		return nil, err
	}
	r := bufio.NewReaderSize(rc, 256<<10)
	l := &LineRange{R: r, Offset: 0, End: p.End, rc: rc}
	if _, compressed := codec.ForPath(p.File.Path); compressed {
		l.End = math.MaxInt64
		return l, nil
	}
	if p.Start > 0 {
		n, err := skipLine(r)
		l.Offset = p.Start - 1 + n
		if err != nil && err != io.EOF {
			rc.Close()
			return nil, readFailed(filePart(p), err)
		}
	}
	return l, nil
}

// ReadFailed names the file of a failed read of p, and the codec of a compressed one.
func ReadFailed(p FilePart, err error) error { return readFailed(filePart(p), err) }
