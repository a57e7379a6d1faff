package dataset

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/framework/storage/codec"
	"github.com/flint-mesos/flint/framework/task"
)

// WholeTextFiles is one record per file at path: its path (an absolute local path, or the
// URL as written: s3://bucket/key, https://…) and its whole content as text, as Spark's
// wholeTextFiles. path is listed on the driver when the job is planned as TextFile lists
// (a file, a directory or key prefix, a glob; any storage scheme; a relative local path
// resolved against the driver's working directory). A file is never split: the listed
// files are packed, in listing order, into min(minParts, files) partitions of about equal
// bytes (minParts ≤ 0: min(default parallelism, 2), Spark's default). Files ending in .gz,
// .zst, .bz2 or .xz are decompressed. Empty files are kept (content ""); files of a local
// directory are not sniffed for text. A file no longer the version the driver listed fails
// the task naming it (storage.ErrChanged).
func WholeTextFiles(b *Builder, path string, minParts int) Dataset[KV[string, string]] {
	return wholeFiles(b, "wholeTextFiles", path, minParts, true, func(data []byte) string { return string(data) })
}

// BinaryFiles is one record per file at path: its path and its raw bytes (a compressed
// file's compressed bytes), listed and packed into partitions as WholeTextFiles. Spark's
// binaryFiles gives a PortableDataStream to open later; Flint gives the bytes, read by
// the task.
func BinaryFiles(b *Builder, path string, minParts int) Dataset[KV[string, []byte]] {
	return wholeFiles(b, "binaryFiles", path, minParts, false, func(data []byte) []byte { return data })
}

// wholeFiles is a source of one record per listed file: its path and conv of its bytes
// (decompressed when decode is set).
func wholeFiles[V any](b *Builder, op, path string, minParts int, decode bool, conv func([]byte) V) Dataset[KV[string, V]] {
	info := b.newInfo(op, typeName[KV[string, V]](), 0, nil, nil)
	if minParts <= 0 {
		minParts = min(b.DefaultParallelism(), 2)
	}
	var plan filePlan
	b.freeze("splits:"+string(info.id), func() any {
		s, warnings, err := planWholeFiles(b, op, absInputs([]string{path}), minParts)
		if err != nil {
			return filePlan{Err: err.Error()}
		}
		b.warn(warnings...)
		return filePlan{Splits: s}
	}, &plan)
	splits, listErr := plan.Splits, plan.Err
	info.parts = len(splits)
	info.preferred = filePreferences(splits)
	n := &tnode[KV[string, V]]{nodeInfo: info}
	n.compute = func(tc *taskContext, p int, emit func([]KV[string, V]) error) error {
		if listErr != "" {
			return errors.New(listErr)
		}
		m := task.MetricsFrom(tc.ctx)
		for _, part := range splits[p].Parts {
			data, err := readWhole(tc, part.File, decode)
			if err != nil {
				return err
			}
			m.AddInput(part.File.Size, 1) // the bytes read from storage (compressed, for a compressed file), as TextFile
			if err := emit([]KV[string, V]{{Key: part.File.Path, Value: conv(data)}}); err != nil {
				return err
			}
		}
		return nil
	}
	if listErr != "" {
		b.fail(errors.New(listErr))
	}
	b.add(n)
	return Dataset[KV[string, V]]{n}
}

// planWholeFiles lists paths on the driver (storage.Expand) and packs the files whole into
// min(parts, files) splits (packWhole).
func planWholeFiles(b *Builder, op string, paths []string, parts int) ([]fileSplit, []string, error) {
	files, err := storage.Expand(context.Background(), b.config(), paths)
	if err != nil {
		return nil, nil, fmt.Errorf("dataset: %s: %w", op, err)
	}
	splits := packWhole(files, parts, fileHosts)
	if len(splits) == 0 {
		return nil, []string{fmt.Sprintf("dataset: %s input %s holds no file, so the dataset has no records", op, paths[0])}, nil
	}
	return splits, nil, nil
}

// packWhole cuts files, in their order, into min(parts, len(files)) runs of consecutive
// files, each holding at least one, closing run i once the running total of weights
// (size + 1, so that empty files count) reaches (i+1)/parts of the whole. A file is never
// split; a file larger than a run's share makes its run larger than the others.
func packWhole(files []storage.FileInfo, parts int, hosts func(string) []string) []fileSplit {
	k := min(max(parts, 1), len(files))
	var total int64
	for _, f := range files {
		total += f.Size + 1
	}
	out := make([]fileSplit, 0, k)
	var cur fileSplit
	var acc int64
	for j, f := range files {
		cur.Hosts = mergeHosts(cur.Hosts, hosts(f.Path), len(cur.Parts) == 0)
		cur.Parts = append(cur.Parts, filePart{File: f, Start: 0, End: f.Size})
		acc += f.Size + 1
		g := len(out)
		if g == k-1 {
			continue
		}
		if acc*int64(k) >= int64(g+1)*total || len(files)-j-1 == k-g-1 {
			out = append(out, cur)
			cur = fileSplit{}
		}
	}
	if len(cur.Parts) > 0 {
		out = append(out, cur)
	}
	return out
}

// readWhole reads all of f for a task with the task's configuration; decode decompresses
// a file whose extension names a codec. A file not the version listed (its version, or the
// bytes read, differ) fails with storage.ErrChanged naming it.
func readWhole(tc *taskContext, f storage.FileInfo, decode bool) ([]byte, error) {
	ctx := context.Background()
	var cfg *config.Config
	if tc != nil && tc.ctx != nil {
		ctx = tc.ctx
		cfg = framework.TaskConfig(tc.ctx)
	}
	if _, compressed := codec.ForPath(f.Path); compressed && decode {
		rc, err := openPartWith(ctx, cfg, filePart{File: f, Start: 0, End: f.Size})
		if err != nil {
			return nil, err
		}
		defer rc.Close()
		data, err := io.ReadAll(rc)
		if err != nil {
			return nil, readFailed(filePart{File: f, End: f.Size}, err)
		}
		return data, nil
	}
	fs, err := storage.For(ctx, cfg, f.Path)
	if err != nil {
		return nil, fmt.Errorf("dataset: %w", err)
	}
	rc, err := fs.Open(ctx, f, 0, -1)
	if err != nil {
		return nil, readErr(f.Path, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, f.Size+1))
	if err != nil {
		return nil, readFailed(filePart{File: f, End: f.Size}, err)
	}
	if int64(len(data)) != f.Size {
		return nil, fmt.Errorf("dataset: read %s: listed %d bytes, read %d: %w", f.Path, f.Size, len(data), storage.ErrChanged)
	}
	return data, nil
}
