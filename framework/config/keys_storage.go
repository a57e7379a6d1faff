package config

import "time"

const s3Used = " Used by `s3://` (also `s3a://`, `s3n://`) paths on the driver and the executors."

// storageKeys are the input and output settings (framework/storage and dataset's readers).
var storageKeys = []Key{
	{Name: "flint.checkpoint.dir", Kind: KindString, Group: GroupStorage,
		Doc: "Directory `dataset.Checkpoint` writes checkpointed datasets under (Spark's `SparkContext.setCheckpointDir`; a job body may also call `Builder.SetCheckpointDir`): any writable storage scheme (a local path every executor shares, `s3://bucket/prefix`, …). Each run writes below it in a directory of its own, which is kept after the run, as Spark keeps checkpoint files. Unset: `dataset.Checkpoint` fails the job's next action."},
	{Name: "flint.files.maxPartitionBytes", Kind: KindSize, Default: "128m", SizeUnit: Byte, Min: "1", Group: GroupStorage,
		Doc: "Largest number of bytes one task of a file source (`dataset.TextFile`, …) reads (Spark's `spark.sql.files.maxPartitionBytes`): a larger splittable file is cut into byte ranges (ending at line boundaries), and small files are packed together up to this size. A bare number is in bytes."},
	{Name: "flint.files.openCostInBytes", Kind: KindSize, Default: "4m", SizeUnit: Byte, Min: "0", Group: GroupStorage,
		Doc: "What opening a file costs, in bytes read (Spark's `spark.sql.files.openCostInBytes`): each file counts this much more than its size when small files are packed into splits, so a split holds fewer tiny files. A bare number is in bytes."},
	{Name: "flint.s3.endpoint", Kind: KindString, Group: GroupStorage,
		Doc: "URL of the S3-compatible service (`http://127.0.0.1:7070`, `https://minio.example:9000`). Unset: AWS S3 for `flint.s3.region`." + s3Used},
	{Name: "flint.s3.region", Kind: KindString, Group: GroupStorage,
		Doc: "Region requests are signed for. Unset: the AWS environment (`AWS_REGION`) or profile, else `us-east-1`." + s3Used},
	{Name: "flint.s3.pathStyleAccess", Kind: KindBool, Default: "false", Group: GroupStorage,
		Doc: "Address buckets as `endpoint/bucket/key` (path style, what most self-hosted S3-compatible servers need) instead of `bucket.endpoint/key` (virtual-host style) — Hadoop's `fs.s3a.path.style.access`." + s3Used},
	{Name: "flint.s3.accessKey", Kind: KindString, Secret: true, Group: GroupStorage,
		Doc: "Access key id. With `flint.s3.secretKey` (and `flint.s3.sessionToken` for temporary credentials) it replaces the AWS credential chain (environment `AWS_ACCESS_KEY_ID`…, `AWS_PROFILE` and the shared config and credentials files, web identity, the instance's role). A secret: redacted everywhere, never in a URI; Mesos executors get it only as a Mesos secret (the variable `AWS_ACCESS_KEY_ID` of type `SECRET`, the path of `flint.mesos.executor.secret.*`), not with the job's settings." + s3Used},
	{Name: "flint.s3.accessKey.file", Kind: KindString, Group: GroupStorage,
		Doc: "File on the driver holding `flint.s3.accessKey` (trailing newline dropped); the driver reads it and sends the value to its executors as a Mesos secret (the file need not exist on the agents)." + s3Used},
	{Name: "flint.s3.secretKey", Kind: KindString, Secret: true, Group: GroupStorage,
		Doc: "Secret access key, with `flint.s3.accessKey`. A secret: redacted everywhere; Mesos executors get it only as a Mesos secret (`AWS_SECRET_ACCESS_KEY`)." + s3Used},
	{Name: "flint.s3.secretKey.file", Kind: KindString, Group: GroupStorage,
		Doc: "File on the driver holding `flint.s3.secretKey` (trailing newline dropped)." + s3Used},
	{Name: "flint.s3.sessionToken", Kind: KindString, Secret: true, Group: GroupStorage,
		Doc: "Session token of temporary credentials, with `flint.s3.accessKey` and `flint.s3.secretKey`. A secret; Mesos executors get it only as a Mesos secret (`AWS_SESSION_TOKEN`)." + s3Used},
	{Name: "flint.s3.sessionToken.file", Kind: KindString, Group: GroupStorage,
		Doc: "File on the driver holding `flint.s3.sessionToken` (trailing newline dropped)." + s3Used},
	{Name: "flint.s3.connectTimeout", Kind: KindDuration, Default: "10s", DurationUnit: time.Second, Min: "1ms", Group: GroupStorage,
		Doc: "Longest wait for a connection to the S3 service. A bare number is in seconds." + s3Used},
	{Name: "flint.s3.requestTimeout", Kind: KindDuration, Default: "60s", DurationUnit: time.Second, Min: "1ms", Group: GroupStorage,
		Doc: "Longest wait for the S3 service to start answering a request (a stalled server): the attempt fails and is retried. A bare number is in seconds." + s3Used},
	{Name: "flint.s3.maxAttempts", Kind: KindInt, Default: "5", Min: "1", Group: GroupStorage,
		Doc: "Attempts of one S3 request (timeouts, throttling, 5xx answers) before the read or write fails, with jittered exponential back-off between them." + s3Used},
	{Name: "flint.s3.maxBackoff", Kind: KindDuration, Default: "20s", DurationUnit: time.Second, Min: "1ms", Group: GroupStorage,
		Doc: "Longest back-off between two attempts of an S3 request. A bare number is in seconds." + s3Used},
	{Name: "flint.s3.multipart.size", Kind: KindSize, Default: "32m", SizeUnit: Byte, Min: "5m", Max: "5g", Group: GroupStorage,
		Doc: "Size of each part a writer uploads (S3 multipart upload; 5 MiB to 5 GiB, at most 10,000 parts per file). Each writing task buffers one part in memory while the previous one uploads. A bare number is in bytes." + s3Used},
}
