// Package uri moves files into task sandboxes: the fetcher that gives
// Mesos' CommandInfo.URI its meaning (used by the minimesos agent and by
// Flint's executors), with a safe archive extractor and a size-bounded
// download cache, and the driver's file server that publishes files (by
// default the driver's own executable) for those fetchers.
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
// or the URI's basename with the query stripped. executable=true means
// chmod 0755 and no extraction. extract (default true) unpacks .tar .tgz
// .tar.gz .tbz2 .tar.bz2 .txz .tar.xz .zip into the sandbox top and
// gunzips a bare .gz there; the archive stays in the sandbox, as in Mesos,
// unless it came from the cache (then it is extracted straight from the
// cache). An http(s) URI may end in "#sha256=<hex>": the fragment is never
// sent and the content must match it (Flint's file server publishes the
// executable this way).
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
//
// # File server
//
// Server is the driver's HTTP file server (Spark's file server for jars and
// files). AddFile and AddExecutable publish a file under
// /files/<sha256>/<name>#sha256=<sha256>, so fetchers verify what they get;
// names are looked up in a table, never joined to the filesystem, and a file
// that changed after it was added is refused (409/410) rather than served
// with a stale hash. A token is required by default (a Bearer header, or a
// ?token= query for Mesos fetchers that cannot send headers; never logged);
// TokenHeader gives a Fetcher the header for the server's own host only.
// GET and HEAD with ranges and ETags are served by http.ServeContent.
package uri
