// Package files is an executor's store of the files a job added
// (framework.Context.AddFile, AddDir, AddArchive): Spark's SparkFiles on the
// executor side.
//
// Every task description lists the files added before its stage was
// submitted (flintpb.FileRef: name, URL, SHA-256, whether to extract).
// Store.Prepare makes each of them present before the task runs: a file is
// fetched once per executor, by the first task that needs it (concurrent
// tasks wait for the same fetch), into the store's directory under its name;
// later tasks find it there. A fetch verifies the SHA-256 when the
// description carries one, retries with exponential backoff, and, for
// archives and added directories, unpacks into a directory of that name
// with uri.Extract's protections. Files the driver serves (FileRef.served)
// are fetched with the task's files token as a Bearer header sent to that
// server only; remote URLs are fetched as given, with no credential.
//
// Prepare returns the task's task.Files (name → local path), which the
// runtime puts into the task's context (task.WithFiles); task code reads it
// through framework.TaskContextOf(ctx).File(name).
package files
