package codec

import (
	"compress/bzip2"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// Codec is one compression format.
type Codec struct {
	// Name is how users choose it ("gzip", "zstd", "bzip2", "xz").
	Name string
	// Ext is the file name extension, with its dot.
	Ext string
	// NewReader decompresses r.
	NewReader func(r io.Reader) (io.ReadCloser, error)
	// NewWriter compresses into w; nil when Flint cannot write the format.
	NewWriter func(w io.Writer) (io.WriteCloser, error)
}

var codecs = []Codec{
	{Name: "gzip", Ext: ".gz",
		NewReader: func(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) },
		NewWriter: func(w io.Writer) (io.WriteCloser, error) { return gzip.NewWriter(w), nil }},
	{Name: "zstd", Ext: ".zst",
		NewReader: func(r io.Reader) (io.ReadCloser, error) {
			d, err := zstd.NewReader(r, zstd.WithDecoderConcurrency(1))
			if err != nil {
				return nil, err
			}
			return d.IOReadCloser(), nil
		},
		NewWriter: func(w io.Writer) (io.WriteCloser, error) { return zstd.NewWriter(w, zstd.WithEncoderConcurrency(1)) }},
	{Name: "bzip2", Ext: ".bz2",
		NewReader: func(r io.Reader) (io.ReadCloser, error) { return io.NopCloser(bzip2.NewReader(r)), nil }},
	{Name: "xz", Ext: ".xz",
		NewReader: func(r io.Reader) (io.ReadCloser, error) {
			x, err := xz.NewReader(r)
			if err != nil {
				return nil, err
			}
			return io.NopCloser(x), nil
		},
		NewWriter: func(w io.Writer) (io.WriteCloser, error) { return xz.NewWriter(w) }},
}

// ForPath is the codec of the file at path by its extension (case-insensitive), if any.
func ForPath(path string) (Codec, bool) {
	if i := strings.LastIndexAny(path, "?#"); i >= 0 && strings.Contains(path, "://") && strings.HasPrefix(path, "http") {
		path = path[:i]
	}
	lower := strings.ToLower(path)
	for _, c := range codecs {
		if strings.HasSuffix(lower, c.Ext) {
			return c, true
		}
	}
	return Codec{}, false
}

// ByName is the codec called name ("gzip", "zstd", "xz"; "bzip2" has no writer), for
// writing; "" or "none" is no compression (ok true, zero Codec).
func ByName(name string) (Codec, error) {
	if name == "" || strings.EqualFold(name, "none") || strings.EqualFold(name, "uncompressed") {
		return Codec{}, nil
	}
	var names []string
	for _, c := range codecs {
		if strings.EqualFold(c.Name, name) {
			if c.NewWriter == nil {
				return Codec{}, fmt.Errorf("codec: Flint reads %s but cannot write it", c.Name)
			}
			return c, nil
		}
		if c.NewWriter != nil {
			names = append(names, c.Name)
		}
	}
	slices.Sort(names)
	return Codec{}, fmt.Errorf("codec: unknown compression %q (want none, %s)", name, strings.Join(names, ", "))
}
