package uri

import (
	"bufio"
	"compress/bzip2"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/ulikunitz/xz"
)

// Default extraction limits (Config.MaxExtractBytes, Config.MaxExtractFiles).
const (
	DefaultMaxExtractBytes int64 = 8 << 30
	DefaultMaxExtractFiles       = 100_000
)

// Limits bound what one archive may expand to.
type Limits struct {
	// MaxBytes caps the bytes written for all regular files together
	// (counted as written, whatever the headers claim). <= 0 means
	// DefaultMaxExtractBytes.
	MaxBytes int64
	// MaxFiles caps the number of entries (files, directories, links).
	// <= 0 means DefaultMaxExtractFiles.
	MaxFiles int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxExtractBytes
	}
	if l.MaxFiles <= 0 {
		l.MaxFiles = DefaultMaxExtractFiles
	}
	return l
}

type archiveKind int

const (
	notArchive archiveKind = iota
	kindTar
	kindTarGz
	kindTarBz2
	kindTarXz
	kindZip
	kindGz // a bare gzip-compressed file
)

// IsArchive reports whether the fetcher extracts a file of this name when
// its URI asks for extraction (the default): .tar .tgz .tar.gz .tbz2
// .tar.bz2 .txz .tar.xz .zip and a bare .gz, by case-sensitive suffix as
// Mesos' fetcher decides. Drivers ask it to know what an agent will do
// with a URI they send.
func IsArchive(name string) bool { return archiveKindOf(name) != notArchive }

// archiveKindOf classifies a file name the way Mesos' fetcher does
// (case-sensitive suffixes).
func archiveKindOf(name string) archiveKind {
	has := func(s ...string) bool {
		for _, x := range s {
			if strings.HasSuffix(name, x) {
				return true
			}
		}
		return false
	}
	switch {
	case has(".tar"):
		return kindTar
	case has(".tgz", ".tar.gz"):
		return kindTarGz
	case has(".tbz2", ".tar.bz2"):
		return kindTarBz2
	case has(".txz", ".tar.xz"):
		return kindTarXz
	case has(".zip"):
		return kindZip
	case has(".gz"):
		return kindGz
	}
	return notArchive
}

// Extract unpacks archive into destDir (created if missing), choosing the
// format from the archive's name: .tar .tgz .tar.gz .tbz2 .tar.bz2 .txz
// .tar.xz .zip, or a bare .gz, which is decompressed to destDir/<name
// without .gz>. Anything else returns ErrNotArchive. The archive itself is
// left in place.
//
// Entries that would land outside destDir are refused with
// ErrUnsafeArchive: absolute names, names with a ".." element or a
// backslash, paths through a symlink, symlinks whose target is absolute or
// climbs above the destination (".." is allowed only as leading elements),
// hard links to anything but a regular file extracted earlier from the same
// archive, and device, fifo and socket entries. Exceeding limits returns
// ErrTooLarge. On any error everything the extraction created is removed
// (files it replaced are lost). Modes are kept masked to 0777 (no setuid,
// setgid or sticky bits); directories also get u+rwx so the sandbox stays
// removable.
func Extract(archive, destDir string, limits Limits) error {
	kind := archiveKindOf(archive)
	if kind == notArchive {
		return fmt.Errorf("uri: extract %s: %w", archive, ErrNotArchive)
	}
	return extractFile(context.Background(), kind, archive, filepath.Base(archive), destDir, limits)
}

// extractFile unpacks src, an archive of the given kind, into destDir. name
// is the archive's logical file name (a bare .gz is written to name without
// .gz, at the top of destDir).
func extractFile(ctx context.Context, kind archiveKind, src, name, destDir string, limits Limits) error {
	if err := os.MkdirAll(destDir, 0o755); err != nil {
		return fmt.Errorf("uri: extract %s: %w", name, err)
	}
	root, err := os.OpenRoot(destDir)
	if err != nil {
		return fmt.Errorf("uri: extract %s: %w", name, err)
	}
	defer root.Close()
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("uri: extract %s: %w", name, err)
	}
	defer f.Close()
	x := &extractor{root: root, limits: limits.withDefaults(), regular: map[string]bool{}}
	in := bufio.NewReaderSize(ctxReader{ctx, f}, 64<<10)
	switch kind {
	case kindZip:
		err = x.zip(ctx, f)
	case kindGz:
		err = x.gunzip(in, strings.TrimSuffix(filepath.Base(name), ".gz"))
	default:
		err = x.tarCompressed(ctx, kind, in)
	}
	if err == nil {
		err = x.finish()
	}
	if err != nil {
		x.cleanup()
		return fmt.Errorf("uri: extract %s: %w", name, err)
	}
	return nil
}

func (x *extractor) tarCompressed(ctx context.Context, kind archiveKind, in io.Reader) error {
	switch kind {
	case kindTarGz:
		zr, err := gzip.NewReader(in)
		if err != nil {
			return err
		}
		defer zr.Close()
		in = zr
	case kindTarBz2:
		in = bzip2.NewReader(in)
	case kindTarXz:
		xr, err := xz.NewReader(in)
		if err != nil {
			return err
		}
		in = xr
	}
	return x.tar(ctx, in)
}

func (x *extractor) gunzip(in io.Reader, out string) error {
	if out == "" || out == "." || out == ".." {
		return fmt.Errorf("%w: no file name left after removing .gz", ErrInvalidURI)
	}
	zr, err := gzip.NewReader(in)
	if err != nil {
		return err
	}
	defer zr.Close()
	if err := x.count(out); err != nil {
		return err
	}
	return x.writeFile(out, zr, 0o644, -1)
}

// ctxReader fails reads once ctx is done, so long copies and extractions
// stop on cancellation.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// isSpecial reports device, fifo, socket and other non-regular modes.
func isSpecial(m fs.FileMode) bool {
	return m&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeNamedPipe|fs.ModeSocket|fs.ModeIrregular) != 0
}
