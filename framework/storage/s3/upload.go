package s3

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/flint-mesos/flint/framework/storage"
)

// Stage starts a multipart upload to p's key. Parts upload while the caller writes the
// next one (one in flight); nothing is visible at p until Publish completes the upload. Once
// the upload exists, a _SUCCESS or _ABORTED beside p means the output's job ended: the
// upload is aborted and Stage fails with storage.ErrCommitted or storage.ErrAborted
// (storage.Writable, storage.Ended).
func (f *FS) Stage(ctx context.Context, p string) (storage.Staged, error) {
	u, err := f.start(ctx, p)
	if err != nil {
		return nil, err
	}
	// Only now look for the output's markers: the driver writes _SUCCESS or _ABORTED before
	// its final sweep of open uploads, so an upload the sweep did not see (created after it
	// listed) sees the marker. A cancelled ctx fails the look: the upload is aborted too.
	if err := storage.Ended(ctx, f.Stat, p); err != nil {
		if aerr := u.Abort(); aerr != nil {
			err = errors.Join(err, aerr)
		}
		return nil, err
	}
	return u, nil
}

// start creates a multipart upload to p's key.
func (f *FS) start(ctx context.Context, p string) (*upload, error) {
	l, err := parse(p)
	if err != nil {
		return nil, err
	}
	if l.key == "" || strings.HasSuffix(l.key, "/") {
		return nil, fmt.Errorf("storage: s3 write %s: not an object key", p)
	}
	out, err := f.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{Bucket: &l.bucket, Key: &l.key})
	if err != nil {
		return nil, fail("write", p, err)
	}
	return &upload{fs: f, ctx: ctx, path: p, loc: l, id: aws.ToString(out.UploadId)}, nil
}

// upload is one staged write: a multipart upload in progress.
type upload struct {
	fs       *FS
	ctx      context.Context
	path     string
	loc      location
	id       string
	buf      []byte
	spare    []byte
	etags    []string
	n        int64
	inflight chan partDone // the previous part's upload, nil when none
	err      error
}

type partDone struct {
	part int32
	etag string
	body []byte
	err  error
}

func (u *upload) Write(b []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	written := 0
	for len(b) > 0 {
		// The buffer grows as bytes come (append), up to a part: a small file does not
		// cost a whole part's allocation (and clearing), as it did with the buffer made
		// part-sized at Stage.
		k := min(len(b), int(u.fs.partSize)-len(u.buf))
		u.buf = append(u.buf, b[:k]...)
		b, written = b[k:], written+k
		if len(u.buf) == int(u.fs.partSize) {
			if err := u.send(); err != nil {
				return written, err
			}
		}
	}
	u.n += int64(written)
	return written, nil
}

// send uploads the buffered part in the background once the previous one is done.
func (u *upload) send() error {
	if err := u.wait(); err != nil {
		return err
	}
	part := int32(len(u.etags) + 1)
	u.etags = append(u.etags, "")
	body := u.buf
	u.buf, u.spare = u.spare[:0], nil
	done := make(chan partDone, 1)
	u.inflight = done
	client, in := u.fs.client, &s3.UploadPartInput{Bucket: &u.loc.bucket, Key: &u.loc.key,
		UploadId: &u.id, PartNumber: aws.Int32(part), Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body)))}
	go func() {
		out, err := client.UploadPart(u.ctx, in)
		d := partDone{part: part, body: body, err: err}
		if err == nil {
			d.etag = aws.ToString(out.ETag)
		}
		done <- d
	}()
	return nil
}

// wait waits for the part in flight, if any.
func (u *upload) wait() error {
	if u.inflight == nil {
		return u.err
	}
	d := <-u.inflight
	u.inflight = nil
	if d.err != nil && u.err == nil {
		u.err = fail("write", u.path, d.err)
	}
	if d.err == nil {
		u.etags[d.part-1] = d.etag
		u.spare = d.body
	}
	return u.err
}

// Finish uploads the last part (an empty one for an empty file) and returns the upload.
func (u *upload) Finish() (storage.Pending, error) {
	if u.err == nil && (len(u.buf) > 0 || len(u.etags) == 0) {
		u.send()
	}
	if err := u.wait(); err != nil {
		return storage.Pending{}, err
	}
	return storage.Pending{Path: u.path, ID: u.id, Parts: u.etags, Size: u.n}, nil
}

// Abort aborts the multipart upload, dropping its parts.
func (u *upload) Abort() error {
	u.wait()
	_, err := u.fs.client.AbortMultipartUpload(context.WithoutCancel(u.ctx), &s3.AbortMultipartUploadInput{Bucket: &u.loc.bucket, Key: &u.loc.key, UploadId: &u.id})
	if err != nil && !isNoSuchUpload(err) {
		return fail("abort upload of", u.path, err)
	}
	return nil
}

func isNoSuchUpload(err error) bool {
	var nsu *types.NoSuchUpload
	return errors.As(err, &nsu) || strings.Contains(err.Error(), "NoSuchUpload")
}

// Publish completes the upload. When the upload is already gone (a retried Publish whose
// first call succeeded), the object's ETag proves whether it is this upload's: S3's ETag of
// a multipart object is the MD5 of its parts' MD5s, a dash, and the number of parts.
func (f *FS) Publish(ctx context.Context, p storage.Pending) error {
	l, err := parse(p.Path)
	if err != nil {
		return err
	}
	parts := make([]types.CompletedPart, len(p.Parts))
	for i, et := range p.Parts {
		parts[i] = types.CompletedPart{ETag: aws.String(et), PartNumber: aws.Int32(int32(i + 1))}
	}
	_, err = f.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{Bucket: &l.bucket, Key: &l.key,
		UploadId: &p.ID, MultipartUpload: &types.CompletedMultipartUpload{Parts: parts}})
	if err == nil {
		return nil
	}
	if isNoSuchUpload(err) {
		if st, serr := f.Stat(ctx, p.Path); serr == nil && st.Version == multipartETag(p.Parts) {
			return nil
		}
	}
	return fail("publish", p.Path, err)
}

// multipartETag is the quoted ETag S3 gives the object a multipart upload of parts makes.
func multipartETag(parts []string) string {
	h := md5.New()
	for _, et := range parts {
		b, err := hex.DecodeString(strings.Trim(et, `"`))
		if err != nil {
			return ""
		}
		h.Write(b)
	}
	return fmt.Sprintf(`"%x-%d"`, h.Sum(nil), len(parts))
}

// AbortStaged aborts every multipart upload still open under dir's prefix.
func (f *FS) AbortStaged(ctx context.Context, dir string) error {
	l, err := parse(dir)
	if err != nil {
		return err
	}
	prefix := l.dirPrefix()
	var errs []error
	in := &s3.ListMultipartUploadsInput{Bucket: &l.bucket, Prefix: &prefix}
	for {
		out, err := f.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return fail("list uploads under", dir, err)
		}
		for _, up := range out.Uploads {
			_, err := f.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{Bucket: &l.bucket, Key: up.Key, UploadId: up.UploadId})
			if err != nil && !isNoSuchUpload(err) {
				errs = append(errs, fail("abort upload of", l.uri(aws.ToString(up.Key)), err))
			}
		}
		if !aws.ToBool(out.IsTruncated) {
			break
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
	return errors.Join(errs...)
}

// Uploads lists the multipart uploads open under dir's prefix, as URIs (tests and
// operators: what AbortStaged would abort).
func (f *FS) Uploads(ctx context.Context, dir string) ([]string, error) {
	l, err := parse(dir)
	if err != nil {
		return nil, err
	}
	prefix := l.dirPrefix()
	var keys []string
	in := &s3.ListMultipartUploadsInput{Bucket: &l.bucket, Prefix: &prefix}
	for {
		out, err := f.client.ListMultipartUploads(ctx, in)
		if err != nil {
			return nil, fail("list uploads under", dir, err)
		}
		for _, up := range out.Uploads {
			keys = append(keys, l.uri(aws.ToString(up.Key)))
		}
		if !aws.ToBool(out.IsTruncated) {
			return keys, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}

// Create writes p with a multipart upload completed on Close.
func (f *FS) Create(ctx context.Context, p string) (io.WriteCloser, error) {
	u, err := f.start(ctx, p) // a direct write: no commit protocol, no _SUCCESS check
	if err != nil {
		return nil, err
	}
	return &direct{upload: u, fs: f, ctx: ctx}, nil
}

type direct struct {
	*upload
	fs  *FS
	ctx context.Context
}

func (d *direct) Close() error {
	p, err := d.Finish()
	if err == nil {
		err = d.fs.Publish(d.ctx, p)
	}
	if err != nil {
		d.Abort()
	}
	return err
}
