// Package s3 is storage's "s3" scheme (also "s3a" and "s3n", the names Spark jobs use) for
// AWS S3 and S3-compatible stores (MinIO, Ceph RGW, SeaweedFS, Versity's gateway): any
// region, an endpoint of one's own (flint.s3.endpoint), path-style or virtual-host bucket
// addressing (flint.s3.pathStyleAccess). Importing it registers the schemes.
//
// # Client
//
// It uses aws-sdk-go-v2 rather than minio-go because the commit protocol (storage's doc)
// rests on three operations that are first-class, typed calls there — CreateMultipartUpload
// / UploadPart / CompleteMultipartUpload (a task's write stays invisible until the driver
// completes it), AbortMultipartUpload, and ListMultipartUploads by prefix (how the driver
// finds and aborts the uploads of killed writers and speculative losers it never heard
// from) — where minio-go keeps them in its lower-level Core type beside a PutObject that
// hides them; and because its credential chain is the standard one users already configure
// (environment, AWS_PROFILE with the shared config and credentials files, SSO, web
// identity, the instance's role, session tokens), with a standard retryer (jittered
// exponential back-off) we bound with flint.s3.maxAttempts and flint.s3.maxBackoff.
// Request checksums are sent only when an operation requires them, so stores that predate
// the SDK's default CRC checksums work.
//
// # Credentials
//
// flint.s3.accessKey and flint.s3.secretKey (with flint.s3.sessionToken for temporary
// credentials), or their .file variants (read on the driver), replace the SDK's chain. They
// are declared secrets: redacted from logs, the UI and the event log, never in a URI
// (requests are signed, never presigned), and no error quotes them. They are withheld from
// the job's settings sent to executors (storage.ExecutorSecrets); the Mesos backends give
// every executor their values as AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
// AWS_SESSION_TOKEN, environment variables of type SECRET holding a Mesos Secret — the path
// of flint.mesos.executor.secret.* and secret flint.executorEnv.* entries — which the AWS
// chain of the executor's client reads first. Without them each process — driver and
// executors — uses the AWS chain of its own environment: a cluster's own secret store can
// give executors keys without the driver holding them, as a reference-type Mesos secret
// exposed as AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (flint.mesos.executor.secret.names
// and .envkeys).
//
// # Consistency
//
// Reads carry If-Match with the ETag the driver listed, so an object replaced between
// listing and reading fails the task with storage.ErrChanged; a deleted one with
// storage.ErrNotExist.
//
// # Stalls and dropped connections
//
// Every request is tried flint.s3.maxAttempts times with jittered exponential back-off; an
// attempt fails when the server sends nothing for flint.s3.requestTimeout. A read whose body
// stalls or breaks midway is resumed from the byte where it stopped (a ranged GET, still
// If-Match), the failed read and the resuming attempts together at most flint.s3.maxAttempts
// in a row without progress; then the read fails with one error naming the object and the
// byte.
package s3
