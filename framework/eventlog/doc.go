// Package eventlog writes a driver's listener events to disk and reads them
// back: Spark's event log, for the history server.
//
// An application's log is a directory, <dir>/<app-id>/, of numbered files
// events_00001.jsonl (events_00001.jsonl.zst when compressed with zstd),
// each a sequence of JSON lines {"Event": "<type>", "Body": {…}}. A Writer
// is an event.Listener: it appends every event it receives, starts the next
// file once a file holds MaxFileSize bytes of JSON (rolling, as Spark's
// spark.eventLog.rolling.maxFileSize), and flushes what it buffered every
// FlushInterval (one second by default) — a zstd frame block at a time — so
// a driver killed with SIGKILL loses at most the last interval of events.
//
// Replay reads a log into any listener (the history server's
// uistore.Store). A log cut short (the driver was killed mid-write, the
// disk filled) or damaged is replayed up to the damage: Replay reports
// what it skipped as warnings, and never fails on the content of a file.
// Unknown event types (from a newer Flint) are skipped with a warning.
package eventlog
