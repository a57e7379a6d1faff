package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/flint-mesos/flint/framework/storage"
)

// FS is one S3 client's view of every bucket. Safe for concurrent use.
type FS struct {
	client      *s3.Client
	http        *http.Client
	partSize    int64
	maxAttempts int           // of a request, and of resuming a read that failed mid-body
	maxBackoff  time.Duration // longest wait before resuming a read
}

var _ storage.Writable = (*FS)(nil)

// CloseIdleConnections closes the client's idle connections.
func (f *FS) CloseIdleConnections() { f.http.CloseIdleConnections() }

// location is a path split into its scheme ("s3a"), bucket and key.
type location struct{ scheme, bucket, key string }

func parse(p string) (location, error) {
	i := strings.Index(p, "://")
	if i <= 0 {
		return location{}, fmt.Errorf("storage: %q is not an s3:// URI", p)
	}
	rest := p[i+3:]
	bucket, key, _ := strings.Cut(rest, "/")
	if bucket == "" {
		return location{}, fmt.Errorf("storage: %q names no bucket", p)
	}
	return location{scheme: p[:i], bucket: bucket, key: key}, nil
}

func (l location) uri(key string) string { return l.scheme + "://" + l.bucket + "/" + key }

// dirPrefix is the key prefix of everything under l seen as a directory.
func (l location) dirPrefix() string {
	if l.key == "" || strings.HasSuffix(l.key, "/") {
		return l.key
	}
	return l.key + "/"
}

// fail maps an SDK error to storage's errors, naming the operation and the path. It quotes
// the service's error code and message, never the request's credentials (they are only in
// signed headers, which no error carries).
func fail(op, p string, err error) error {
	var ae smithy.APIError
	status := 0
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		status = re.HTTPStatusCode()
	}
	if !errors.As(err, &ae) {
		return fmt.Errorf("storage: s3 %s %s: %w", op, p, err)
	}
	code, msg := ae.ErrorCode(), ae.ErrorMessage()
	detail := code
	if msg != "" {
		detail += ": " + msg
	}
	var sentinel error
	switch {
	case code == "InvalidAccessKeyId" || code == "SignatureDoesNotMatch" || code == "XAdminUserNotFound":
		// XAdminUserNotFound: Versity's gateway on an unknown access key id (HTTP 404).
		sentinel = storage.ErrAccess
		detail = "wrong credentials (" + detail + ")"
	case code == "NoSuchBucket":
		sentinel = storage.ErrNotExist
		detail = "no such bucket (" + detail + ")"
	case code == "NoSuchKey" || code == "NotFound" || status == http.StatusNotFound:
		sentinel = storage.ErrNotExist
	case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
		sentinel = storage.ErrChanged
		detail = "the object's ETag is no longer the one listed (" + detail + ")"
	case code == "AccessDenied" || code == "Forbidden" || status == http.StatusForbidden:
		// A HEAD answer has no body to say which: name both.
		sentinel = storage.ErrAccess
		detail = "wrong credentials or no permission (" + detail + ")"
	default:
		return fmt.Errorf("storage: s3 %s %s: %s (HTTP %d)", op, p, detail, status)
	}
	return fmt.Errorf("storage: s3 %s %s: %s: %w", op, p, detail, sentinel)
}

// Stat heads the object at p.
func (f *FS) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	l, err := parse(p)
	if err != nil {
		return storage.FileInfo{}, err
	}
	if l.key == "" || strings.HasSuffix(l.key, "/") {
		return storage.FileInfo{}, fmt.Errorf("storage: s3 %s is a bucket or prefix: %w", p, storage.ErrNotExist)
	}
	out, err := f.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &l.bucket, Key: &l.key})
	if err != nil {
		return storage.FileInfo{}, fail("stat", p, err)
	}
	return storage.FileInfo{Path: p, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified), Version: aws.ToString(out.ETag)}, nil
}

// List is every object under dir's prefix, in key order (S3 lists keys sorted), without
// zero-length "directory" markers (keys ending in '/').
func (f *FS) List(ctx context.Context, dir string) ([]storage.FileInfo, error) {
	l, err := parse(dir)
	if err != nil {
		return nil, err
	}
	prefix := l.dirPrefix()
	var out []storage.FileInfo
	pages := s3.NewListObjectsV2Paginator(f.client, &s3.ListObjectsV2Input{Bucket: &l.bucket, Prefix: &prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return nil, fail("list", dir, err)
		}
		for _, o := range page.Contents {
			k := aws.ToString(o.Key)
			if strings.HasSuffix(k, "/") {
				continue
			}
			out = append(out, storage.FileInfo{Path: l.uri(k), Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified), Version: aws.ToString(o.ETag)})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("storage: s3 list %s: no object under it: %w", dir, storage.ErrNotExist)
	}
	return out, nil
}

// Open gets bytes [off, off+n) of fi, with If-Match on the listed ETag. A read that fails
// mid-body (a stalled server: no data for flint.s3.requestTimeout, a reset connection) is
// resumed where it stopped, with back-off, up to flint.s3.maxAttempts times in a row without
// progress; then it fails with one error naming the object and the offset.
func (f *FS) Open(ctx context.Context, fi storage.FileInfo, off, n int64) (io.ReadCloser, error) {
	rc, err := f.get(ctx, fi, off, n, 0)
	if err != nil {
		return nil, err
	}
	return &resuming{f: f, ctx: ctx, fi: fi, off: off, n: n, rc: rc}, nil
}

// get is one GET of bytes [off, off+n) of fi (n < 0: to the end), tried up to attempts times
// (0: maxAttempts).
func (f *FS) get(ctx context.Context, fi storage.FileInfo, off, n int64, attempts int) (io.ReadCloser, error) {
	l, err := parse(fi.Path)
	if err != nil {
		return nil, err
	}
	if n == 0 || (off >= fi.Size && fi.Size >= 0) {
		return io.NopCloser(strings.NewReader("")), nil
	}
	rng := fmt.Sprintf("bytes=%d-", off)
	if n > 0 {
		rng += fmt.Sprint(off + n - 1)
	}
	in := &s3.GetObjectInput{Bucket: &l.bucket, Key: &l.key, Range: &rng}
	if fi.Version != "" {
		in.IfMatch = aws.String(fi.Version)
	}
	var opts []func(*s3.Options)
	if attempts > 0 {
		opts = append(opts, func(o *s3.Options) { o.RetryMaxAttempts = attempts })
	}
	out, err := f.client.GetObject(ctx, in, opts...)
	if err != nil {
		var nsk *types.NoSuchKey
		if errors.As(err, &nsk) {
			return nil, fmt.Errorf("storage: s3 read %s: the object listed at planning is gone: %w", fi.Path, storage.ErrNotExist)
		}
		return nil, fail("read", fi.Path, err)
	}
	if et := aws.ToString(out.ETag); fi.Version != "" && et != "" && et != fi.Version {
		out.Body.Close()
		return nil, fmt.Errorf("storage: s3 read %s: ETag listed %s, now %s: %w", fi.Path, fi.Version, et, storage.ErrChanged)
	}
	if total := totalSize(aws.ToString(out.ContentRange)); total >= 0 && total != fi.Size {
		out.Body.Close()
		return nil, fmt.Errorf("storage: s3 read %s: listed %d bytes, now %d: %w", fi.Path, fi.Size, total, storage.ErrChanged)
	}
	return out.Body, nil
}

// resuming is an object's body that resumes a read failed mid-body from where it stopped.
type resuming struct {
	f      *FS
	ctx    context.Context
	fi     storage.FileInfo
	off, n int64 // next byte to read; bytes left (< 0: to the end)
	rc     io.ReadCloser
	fails  int // failures in a row without a byte read
	err    error
}

func (r *resuming) Read(p []byte) (int, error) {
	for r.err == nil {
		k, err := r.rc.Read(p)
		r.off += int64(k)
		if r.n > 0 {
			r.n -= int64(k)
		}
		if k > 0 {
			r.fails = 0
		}
		switch {
		case err == nil, err == io.EOF:
			return k, err
		case r.n == 0: // every byte asked for was read: what failed after them does not matter
			return k, io.EOF
		case k > 0:
			r.resume(err) // the next Read goes on from the new body, or returns r.err
			return k, nil
		}
		r.resume(err)
	}
	return 0, r.err
}

// resume replaces the failed body with a GET from r.off, after a back-off. The failed read
// and the GET's attempts together make at most maxAttempts in a row without progress; past
// them r.err is set: one error naming the object, where it stopped and why.
func (r *resuming) resume(cause error) {
	r.rc.Close()
	r.rc = io.NopCloser(strings.NewReader(""))
	r.fails++
	if left := r.f.maxAttempts - r.fails; left <= 0 || r.ctx.Err() != nil {
		if r.ctx.Err() != nil {
			cause = r.ctx.Err()
		}
		r.err = fmt.Errorf("storage: s3 read %s stopped at byte %d after %d attempts: %w", r.fi.Path, r.off, r.fails, cause)
		return
	}
	wait := min(r.f.maxBackoff, 50*time.Millisecond<<min(r.fails, 10))
	t := time.NewTimer(wait/2 + rand.N(wait/2+1))
	select {
	case <-t.C:
	case <-r.ctx.Done():
		t.Stop()
	}
	rc, err := r.f.get(r.ctx, r.fi, r.off, r.n, r.f.maxAttempts-r.fails)
	if err != nil {
		if errors.Is(err, storage.ErrChanged) || errors.Is(err, storage.ErrNotExist) {
			r.err = err // the object changed since listing: final
			return
		}
		r.err = fmt.Errorf("storage: s3 read %s stopped at byte %d (%v); resuming it failed: %w", r.fi.Path, r.off, cause, err)
		return
	}
	r.rc = rc
}

func (r *resuming) Close() error { return r.rc.Close() }

// totalSize is the complete length in a Content-Range header ("bytes 0-9/100"), or -1.
func totalSize(cr string) int64 {
	i := strings.LastIndexByte(cr, '/')
	if i < 0 {
		return -1
	}
	var n int64
	if _, err := fmt.Sscan(cr[i+1:], &n); err != nil {
		return -1
	}
	return n
}

// Delete removes the object at p.
func (f *FS) Delete(ctx context.Context, p string) error {
	l, err := parse(p)
	if err != nil {
		return err
	}
	if _, err := f.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &l.bucket, Key: &l.key}); err != nil {
		if errors.Is(fail("", "", err), storage.ErrNotExist) {
			return nil
		}
		return fail("delete", p, err)
	}
	return nil
}
