package storage

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/flint-mesos/flint/framework/config"
)

// Expand turns a job's input paths into the files they name, each path's files in name
// order: a file is itself; a directory or key prefix is every file under it except those
// under a name starting with '.' or '_' (as Hadoop's input formats skip _SUCCESS,
// _temporary and hidden files); a glob (*, ?, [...] in any component) is every file a
// match names, a matched directory expanded as above. A path naming nothing is an error.
func Expand(ctx context.Context, cfg *config.Config, paths []string) ([]FileInfo, error) {
	if len(paths) == 0 {
		return nil, errors.New("storage: no input path")
	}
	var out []FileInfo
	for _, p := range paths {
		fs, err := For(ctx, cfg, p)
		if err != nil {
			return nil, err
		}
		var files []FileInfo
		if hasMeta(p) {
			files, err = glob(ctx, fs, p)
		} else {
			files, err = expandOne(ctx, fs, p)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

func hasMeta(p string) bool {
	// A URI's query (http) is not a glob.
	if s := Scheme(p); s == "http" || s == "https" {
		return false
	}
	return strings.ContainsAny(p, "*?[")
}

// expandOne is the file at p, or the visible files under it.
func expandOne(ctx context.Context, fs FS, p string) ([]FileInfo, error) {
	st, err := fs.Stat(ctx, p)
	if err == nil && !st.IsDir {
		return []FileInfo{st}, nil
	}
	if err != nil && !errors.Is(err, ErrNotExist) {
		return nil, err
	}
	files, lerr := fs.List(ctx, p)
	if lerr != nil && err == nil && errors.Is(lerr, ErrNotExist) {
		return nil, nil // an empty directory
	}
	if lerr != nil {
		// Neither a file nor a directory: List's error says which part is missing (a bucket,
		// nothing under the prefix).
		return nil, lerr
	}
	return visible(p, files), nil
}

// visible drops the files under dir that have a path component starting with '.' or '_'
// below dir.
func visible(dir string, files []FileInfo) []FileInfo {
	base := strings.TrimSuffix(dir, "/") + "/"
	out := files[:0:0]
	for _, f := range files {
		if !hidden(strings.TrimPrefix(f.Path, base)) {
			out = append(out, f)
		}
	}
	return out
}

func hidden(rel string) bool {
	for c := range strings.SplitSeq(rel, "/") {
		if strings.HasPrefix(c, ".") || strings.HasPrefix(c, "_") {
			return true
		}
	}
	return false
}

// glob lists the directory before pattern's first component with a meta character and keeps
// the files whose first components match pattern's (a longer path is a file under a matched
// directory, kept unless hidden below it).
func glob(ctx context.Context, fs FS, pattern string) ([]FileInfo, error) {
	comps := strings.Split(pattern, "/")
	static := 0
	for static < len(comps) && !strings.ContainsAny(comps[static], "*?[") {
		static++
	}
	for _, c := range comps {
		if _, err := path.Match(c, ""); err != nil {
			return nil, fmt.Errorf("storage: bad glob %q: %w", pattern, err)
		}
	}
	dir := strings.Join(comps[:static], "/")
	if dir == "" && strings.HasPrefix(pattern, "/") {
		dir = "/"
	}
	files, err := fs.List(ctx, dir)
	if err != nil && !errors.Is(err, ErrNotExist) {
		return nil, err
	}
	var out []FileInfo
	for _, f := range files {
		fc := strings.Split(f.Path, "/")
		if len(fc) < len(comps) || !matchAll(comps, fc[:len(comps)]) {
			continue
		}
		if len(fc) > len(comps) && hidden(strings.Join(fc[len(comps):], "/")) {
			continue
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("storage: input %q matches no file: %w", pattern, ErrNotExist)
	}
	return out, nil
}

func matchAll(pats, names []string) bool {
	for i, p := range pats {
		if ok, _ := path.Match(p, names[i]); !ok {
			return false
		}
	}
	return true
}
