// Package storage is where Flint's datasets read and write files, whatever holds them: one
// small interface per job (FS to read, Writable to write and commit), implemented per URI
// scheme and found by scheme (Register, For). It owns the scheme registry, the listing that
// turns a job's input paths into files (Expand: directories, prefixes and globs, Hadoop's
// hidden names skipped) and the errors every scheme maps its own to (ErrNotExist, ErrChanged,
// ErrAccess, ErrReadOnly).
//
// The schemes Flint ships register themselves from their packages: storage/local (plain
// paths and file://), storage/httpfs (http:// and https://, read-only) and storage/s3
// (s3://, s3a:// and s3n://, any S3-compatible store). Another scheme — hdfs://, gs:// —
// is a package that calls Register in its init and is imported by the job's main package;
// the readers and writers of package dataset need no change, since they only use FS and
// Writable.
//
// # Reading
//
// The driver lists at planning (Expand gives every file's size and version); executors open
// only their byte ranges (FS.Open with the listed FileInfo). Open fails with ErrChanged when
// the file is no longer the version the driver listed (S3 and HTTP: its ETag; local: size and
// modification time), so a job never silently mixes two versions of an input.
//
// # Writing: the commit protocol
//
// Object stores have no rename, so writers never make a part file visible themselves. A task
// attempt stages its output (Writable.Stage: on S3 a multipart upload to the final key, not
// completed; locally a file under the output's _temporary directory) and hands the driver a
// Pending — what it would take to publish the write — as its task result. The driver receives
// exactly one result per partition (the attempt the scheduler counted), publishes those
// (Writable.Publish: complete the multipart upload; rename), writes _SUCCESS (SuccessMarker)
// after them, then aborts every other staged write under the output (Writable.AbortStaged:
// abort every multipart upload still open under the prefix — those of failed, killed and
// speculative attempts; remove _temporary). An attempt still running then (its kill not yet
// arrived, a speculative copy) that stages after the sweep listed finds _SUCCESS once its
// write exists and discards it (Stage fails with ErrCommitted), so no upload outlives the job.
// A job that fails or is cancelled publishes nothing, writes _ABORTED (AbortMarker) and then
// aborts everything; an attempt staging after that sweep finds _ABORTED and discards its
// write (ErrAborted), so a failed job leaves no upload or temporary file either — only the
// hidden marker, which the next write into the directory removes. What no marker can close —
// an executor process that dies in the instant between creating its upload (after the
// sweep listed) and looking for the marker — the driver's last sweep closes: once every
// attempt launched before the job ended has ended (its terminal update or its executor's
// loss; the Context's Stop at the latest), no attempt can stage under the output any more and
// the driver aborts what is still staged there, unless the application has begun another
// write into the same directory meanwhile, whose own sweeps then cover it (Writes). This is the
// protocol of Hadoop's S3A "magic" committer, with Flint's driver as the commit coordinator.
//
// A scheme's credentials are declared with RegisterExecutorSecrets: their configuration keys
// are withheld from the job's settings executors receive, and the Mesos backends give
// executors their values as secret environment variables (Mesos Secret protos), the one path
// every executor secret takes.
package storage
