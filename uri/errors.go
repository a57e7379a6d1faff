package uri

import "errors"

// Sentinel errors. Errors returned by this package start with "uri: ", wrap
// one of these where one applies (test with errors.Is) and name the URI or
// archive entry concerned.
var (
	// ErrInvalidURI: an empty URI, one containing a backslash, a single
	// quote or NUL, a relative path (Flint has no frameworks home), a file://
	// URI without an absolute path, a URI without a usable basename, or an
	// output_file that is absolute or leaves the sandbox.
	ErrInvalidURI = errors.New("invalid URI")
	// ErrUnsupportedScheme: a scheme other than file, http or https (ftp,
	// hdfs, s3 … go to a Hadoop client or curl in Mesos; Flint refuses them).
	ErrUnsupportedScheme = errors.New("unsupported scheme")
	// ErrUnsafeArchive: an archive entry that would leave the destination
	// (absolute or ".." names, symlinks or hard links pointing outside, paths
	// through symlinks), or a device, fifo or other special entry.
	ErrUnsafeArchive = errors.New("unsafe archive")
	// ErrTooLarge: a download above Config.MaxDownloadBytes, or an archive
	// expanding beyond Limits.MaxBytes or Limits.MaxFiles.
	ErrTooLarge = errors.New("too large")
	// ErrNotFound: HTTP 404/410 or a missing local file.
	ErrNotFound = errors.New("not found")
	// ErrHTTPStatus: any other non-2xx HTTP response.
	ErrHTTPStatus = errors.New("unexpected HTTP status")
	// ErrNotArchive: Extract was given a file whose name has no known
	// archive suffix.
	ErrNotArchive = errors.New("not a known archive type")
)
