// Package uri is the fetcher that gives Mesos' CommandInfo.URI its
// meaning: it moves files into task sandboxes for the minimesos agent (and
// Flint's executors fetching added files), with a safe archive extractor
// and a size-bounded download cache. The driver's file server that
// publishes files for these fetchers is uri/fileserver.
//
// # Fetching
//
// Fetcher.Fetch takes mesos.CommandInfo_URI values in order and stops at
// the first failure, like the Mesos fetcher (a failure there means
// TASK_FAILED with REASON_CONTAINER_LAUNCH_FAILED; the task never starts):
//
//	URI value                    → source
//	/abs/path, file:///abs/path  → copied (relative paths are refused:
//	                               there is no frameworks home)
//	http://…, https://…          → downloaded; redirects followed; non-2xx fails
//	ftp, hdfs, s3, …             → ErrUnsupportedScheme
//
// The sandbox file is output_file (sandbox-relative, subdirectories
// created, never absolute nor leaving the sandbox, even through a symlink)
// or, exactly as Mesos' fetcher names it, everything after the URI's last
// "/" — query and fragment included, nothing unescaped, so
// http://h/f/flint?token=t names the file "flint?token=t" (set output_file
// to name it otherwise). executable=true means
// chmod 0755 and no extraction. extract (default true) unpacks .tar .tgz
// .tar.gz .tbz2 .tar.bz2 .txz .tar.xz .zip into the sandbox top and
// gunzips a bare .gz there; the archive stays in the sandbox, as in Mesos,
// unless it came from the cache (then it is extracted straight from the
// cache). A fragment is never sent, and no checksum is verified: Mesos'
// fetcher verifies none either, so integrity is the executor's job (it
// checks its own binary's SHA-256 before it registers, and the SHA-256 of
// added files, which for a remote URL SplitChecksum reads from a
// "#sha256=<hex>" fragment).
//
// # Extraction
//
// Extract never writes outside its destination: every write goes through
// an os.Root, and entries that would escape (absolute or ".." names,
// symlinks pointing out, paths through symlinks, hard links to anything
// but a file of the same archive) or are devices or fifos are refused with
// ErrUnsafeArchive. Limits cap the bytes and entries an archive expands to
// (zip, tar and gzip bombs: ErrTooLarge). A refused archive leaves nothing
// behind.
//
// # Cache
//
// A Cache keeps content fetched with cache=true, keyed by the URI, and
// evicts least recently used entries to stay within its byte budget.
// Concurrent fetches of one URI download it once; a hit touches no network.
package uri
