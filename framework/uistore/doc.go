// Package uistore folds the driver's listener events into the state the web
// UI, the REST API and the history server show: Spark's AppStatusListener
// and AppStatusStore in one.
//
// A Store is a listener (event.Listener): the driver adds it to its bus and
// the history server replays an event log into a fresh one, so a live
// application and a finished one are shown from the same state. Reads
// return copies in the shapes of Spark's monitoring REST API
// (org.apache.spark.status.api.v1: ApplicationInfo, JobData, StageData,
// TaskData, ExecutorSummary, ApplicationEnvironmentInfo) with Spark's JSON
// field names; concepts Flint does not have are absent, and docs/ui.md
// lists them.
//
// The store does no I/O and reads no clock: durations of running work are
// measured against the now its readers pass in. Memory is bounded like
// Spark's: the oldest finished jobs and stages beyond Limits are forgotten.
package uistore
