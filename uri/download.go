package uri

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
)

// retrieve writes the content of src to w, sets w's mode (the source's
// permission bits for local files, 0644 for downloads) and returns the
// number of bytes written.
func (f *Fetcher) retrieve(ctx context.Context, src source, w *os.File) (int64, error) {
	if src.kind == kindLocal {
		return f.copyLocal(ctx, src.path, w)
	}
	return f.download(ctx, src, w)
}

func (f *Fetcher) copyLocal(ctx context.Context, path string, w *os.File) (int64, error) {
	r, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%w: %s", ErrNotFound, path)
	}
	if err != nil {
		return 0, err
	}
	defer r.Close()
	fi, err := r.Stat()
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("%s is not a regular file", path)
	}
	if f.maxDownload > 0 && fi.Size() > f.maxDownload {
		return 0, fmt.Errorf("%w: %s has %d bytes, more than %d", ErrTooLarge, path, fi.Size(), f.maxDownload)
	}
	n, err := copyLimited(ctx, w, r, f.maxDownload)
	if err != nil {
		return n, err
	}
	return n, w.Chmod(fi.Mode().Perm())
}

func (f *Fetcher) download(ctx context.Context, src source, w *os.File) (int64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, src.url.String(), nil)
	if err != nil {
		return 0, fmt.Errorf("%w: %v", ErrInvalidURI, err)
	}
	f.addHeaders(req)
	resp, err := f.client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return 0, ctx.Err()
		}
		return 0, err
	}
	defer resp.Body.Close()
	switch code := resp.StatusCode; {
	case code == http.StatusNotFound || code == http.StatusGone:
		return 0, fmt.Errorf("%w: HTTP %s", ErrNotFound, resp.Status)
	case code < 200 || code > 299:
		return 0, fmt.Errorf("%w: HTTP %s", ErrHTTPStatus, resp.Status)
	}
	if f.maxDownload > 0 && resp.ContentLength > f.maxDownload {
		return 0, fmt.Errorf("%w: %d bytes announced, more than %d", ErrTooLarge, resp.ContentLength, f.maxDownload)
	}
	n, err := copyLimited(ctx, w, resp.Body, f.maxDownload)
	if err != nil {
		return n, err
	}
	return n, w.Chmod(0o644)
}

// copyLimited copies r to w, failing with ErrTooLarge beyond max bytes
// (max <= 0: unlimited) and with ctx's error once ctx is done. It copies in
// chunks so file-to-file copies stay in the kernel (copy_file_range).
func copyLimited(ctx context.Context, w io.Writer, r io.Reader, max int64) (int64, error) {
	const chunk = 4 << 20
	var total int64
	for {
		if err := ctx.Err(); err != nil {
			return total, err
		}
		want := int64(chunk)
		if max > 0 && max+1-total < want {
			want = max + 1 - total
		}
		n, err := io.CopyN(w, r, want)
		total += n
		if max > 0 && total > max {
			return total, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, max)
		}
		if errors.Is(err, io.EOF) {
			return total, nil
		}
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				return total, cerr
			}
			return total, err
		}
	}
}
