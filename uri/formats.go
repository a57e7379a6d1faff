package uri

import (
	"archive/tar"
	"archive/zip"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// maxLinkTarget bounds a zip symlink's target (stored as the entry's data).
const maxLinkTarget = 4096

func (x *extractor) tar(ctx context.Context, in io.Reader) error {
	tr := tar.NewReader(in)
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, tar.ErrInsecurePath) && h != nil {
			return unsafeEntry(h.Name, "insecure path")
		}
		if err != nil {
			return err
		}
		if err := x.tarEntry(h, tr); err != nil {
			return err
		}
	}
}

func (x *extractor) tarEntry(h *tar.Header, r io.Reader) error {
	mode := fs.FileMode(h.Mode).Perm()
	switch h.Typeflag {
	case tar.TypeXGlobalHeader:
		return nil // metadata only (git archive writes one)
	case tar.TypeReg, tar.TypeRegA, tar.TypeGNUSparse, tar.TypeCont:
		return x.writeFile(h.Name, r, mode, h.Size)
	case tar.TypeDir:
		return x.dir(h.Name, mode)
	case tar.TypeSymlink:
		return x.symlink(h.Name, h.Linkname)
	case tar.TypeLink:
		return x.hardlink(h.Name, h.Linkname)
	case tar.TypeChar, tar.TypeBlock, tar.TypeFifo:
		return unsafeEntry(h.Name, "device or fifo")
	default:
		return unsafeEntry(h.Name, fmt.Sprintf("unsupported entry type %q", h.Typeflag))
	}
}

func (x *extractor) zip(ctx context.Context, f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	zr, err := zip.NewReader(f, fi.Size())
	if errors.Is(err, zip.ErrInsecurePath) {
		return fmt.Errorf("%w: insecure path in zip", ErrUnsafeArchive)
	}
	if err != nil {
		return err
	}
	if len(zr.File) > x.limits.MaxFiles {
		return fmt.Errorf("%w: zip has %d entries, more than %d", ErrTooLarge, len(zr.File), x.limits.MaxFiles)
	}
	for _, zf := range zr.File {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := x.zipEntry(ctx, zf); err != nil {
			return err
		}
	}
	return nil
}

func (x *extractor) zipEntry(ctx context.Context, zf *zip.File) error {
	mode := zf.Mode()
	switch {
	case mode.IsDir():
		return x.dir(zf.Name, mode.Perm())
	case isSpecial(mode):
		return unsafeEntry(zf.Name, "device, fifo or socket")
	}
	size := int64(-1)
	if zf.UncompressedSize64 <= 1<<62 {
		size = int64(zf.UncompressedSize64)
	}
	rc, err := zf.Open()
	if err != nil {
		return fmt.Errorf("entry %q: %w", zf.Name, err)
	}
	defer rc.Close()
	r := ctxReader{ctx, rc}
	if mode&fs.ModeSymlink != 0 {
		target, err := io.ReadAll(io.LimitReader(r, maxLinkTarget+1))
		if err != nil {
			return fmt.Errorf("entry %q: %w", zf.Name, err)
		}
		if len(target) > maxLinkTarget {
			return unsafeEntry(zf.Name, "symlink target too long")
		}
		return x.symlink(zf.Name, string(target))
	}
	return x.writeFile(zf.Name, r, mode.Perm(), size)
}
