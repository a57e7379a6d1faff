package s3

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"

	"github.com/flint-mesos/flint/framework/storage"
)

// FS is one S3 client's view of every bucket. Safe for concurrent use.
type FS struct {
	client   *s3.Client
	http     *http.Client
	partSize int64
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

// Open gets bytes [off, off+n) of fi, with If-Match on the listed ETag.
func (f *FS) Open(ctx context.Context, fi storage.FileInfo, off, n int64) (io.ReadCloser, error) {
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
	out, err := f.client.GetObject(ctx, in)
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
