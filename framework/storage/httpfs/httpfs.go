package httpfs

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
)

func init() {
	open := func(context.Context, *config.Config) (storage.FS, error) { return FS{}, nil }
	storage.Register("http", open)
	storage.Register("https", open)
}

// FS reads http(s) URLs with Client (http.DefaultClient when nil).
type FS struct{ Client *http.Client }

var _ storage.FS = FS{}

func (h FS) client() *http.Client {
	if h.Client != nil {
		return h.Client
	}
	return http.DefaultClient
}

func statusErr(op, url string, resp *http.Response) error {
	switch resp.StatusCode {
	case http.StatusNotFound, http.StatusGone:
		return fmt.Errorf("storage: %s %s: %s: %w", op, url, resp.Status, storage.ErrNotExist)
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Errorf("storage: %s %s: %s: %w", op, url, resp.Status, storage.ErrAccess)
	case http.StatusPreconditionFailed:
		return fmt.Errorf("storage: %s %s: %w", op, url, storage.ErrChanged)
	}
	return fmt.Errorf("storage: %s %s: server answered %s", op, url, resp.Status)
}

// Stat sends a HEAD request.
func (h FS) Stat(ctx context.Context, url string) (storage.FileInfo, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, url, nil)
	if err != nil {
		return storage.FileInfo{}, fmt.Errorf("storage: %s: %w", url, err)
	}
	resp, err := h.client().Do(req)
	if err != nil {
		return storage.FileInfo{}, fmt.Errorf("storage: stat %s: %w", url, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return storage.FileInfo{}, statusErr("stat", url, resp)
	}
	if resp.ContentLength < 0 {
		return storage.FileInfo{}, fmt.Errorf("storage: stat %s: the server gives no Content-Length", url)
	}
	mod, _ := http.ParseTime(resp.Header.Get("Last-Modified"))
	return storage.FileInfo{Path: url, Size: resp.ContentLength, ModTime: mod, Version: resp.Header.Get("ETag")}, nil
}

// List is not possible over plain HTTP: a URL is one file.
func (h FS) List(_ context.Context, dir string) ([]storage.FileInfo, error) {
	return nil, fmt.Errorf("storage: %s: an http(s) URL names one file and cannot be listed: %w", dir, storage.ErrNotExist)
}

// Open sends a Range request and checks the answer's total size and ETag against f.
func (h FS) Open(ctx context.Context, f storage.FileInfo, off, n int64) (io.ReadCloser, error) {
	if n == 0 || off >= f.Size {
		return io.NopCloser(strings.NewReader("")), nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, f.Path, nil)
	if err != nil {
		return nil, fmt.Errorf("storage: %s: %w", f.Path, err)
	}
	rng := fmt.Sprintf("bytes=%d-", off)
	if n > 0 {
		rng += strconv.FormatInt(off+n-1, 10)
	}
	req.Header.Set("Range", rng)
	resp, err := h.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("storage: read %s: %w", f.Path, err)
	}
	if err := checkRange(f, off, resp); err != nil {
		resp.Body.Close()
		return nil, err
	}
	if resp.StatusCode == http.StatusOK {
		// A server ignoring Range from byte 0: stop at n.
		if n > 0 {
			return limited{io.LimitReader(resp.Body, n), resp.Body}, nil
		}
	}
	return resp.Body, nil
}

type limited struct {
	io.Reader
	io.Closer
}

// checkRange accepts a 206 whose total is f.Size (or a 200 from byte 0 of f.Size bytes) with
// f's ETag when both are known.
func checkRange(f storage.FileInfo, off int64, resp *http.Response) error {
	var total int64 = -1
	switch {
	case resp.StatusCode == http.StatusPartialContent:
		cr := resp.Header.Get("Content-Range")
		if i := strings.LastIndexByte(cr, '/'); i >= 0 {
			total, _ = strconv.ParseInt(cr[i+1:], 10, 64)
		}
	case resp.StatusCode == http.StatusOK && off == 0:
		total = resp.ContentLength
	case resp.StatusCode == http.StatusRequestedRangeNotSatisfiable:
		return fmt.Errorf("storage: read %s from byte %d: the file is shorter than listed (%d bytes): %w", f.Path, off, f.Size, storage.ErrChanged)
	default:
		return statusErr("read", f.Path, resp)
	}
	if total >= 0 && total != f.Size {
		return fmt.Errorf("storage: read %s: listed %d bytes, now %d: %w", f.Path, f.Size, total, storage.ErrChanged)
	}
	if et := resp.Header.Get("ETag"); f.Version != "" && et != "" && et != f.Version {
		return fmt.Errorf("storage: read %s: ETag was %s, now %s: %w", f.Path, f.Version, et, storage.ErrChanged)
	}
	return nil
}
