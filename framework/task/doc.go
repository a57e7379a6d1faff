// Package task owns the task function registry: the table of named Go
// functions a job's tasks run.
//
// Driver and executor are the same binary, so user code registers its
// functions from init() into Default(); the driver sends a function's name,
// its codec name and the encoded input in a TaskDescription, and the
// executor looks the name up and calls Entry.Invoke. Register is generic:
// it returns a typed Handle the driver uses to encode inputs and decode
// results, while the registry stores an untyped Entry that works on bytes.
//
//	var wordCount = task.MustRegister(task.Default(), "wordcount",
//		func(ctx context.Context, line string) (map[string]int, error) { ... }, nil)
//
// A running task reports figures the executor sends the driver with its
// result through MetricsFrom(ctx): the executor runtime puts a Metrics in
// every task's context (the dataset layer adds its shuffle writes and
// reads; they reach the driver's TaskEnd events). The files a task was
// sent (Files: name → local path) are in its context the same way
// (WithFiles by the runtime, FilesFrom for framework.TaskContext.File).
//
// Invoke does not recover panics: the executor runtime does, so that it can
// capture the stack. Errors wrap the sentinels ErrUnknownFunction,
// ErrDuplicate, ErrDecode and ErrEncode and are prefixed "task: ".
package task
