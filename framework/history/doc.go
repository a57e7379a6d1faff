// Package history is the history server's view of a directory of event
// logs (flint.eventLog.dir): a webui.Source with one application per log,
// each replayed into a uistore.Store.
//
// Logs are read lazily and again whenever their files change, so an
// application still running (its driver writing the log) is shown as it
// progresses, and a finished one is read once. A damaged or cut-off log is
// shown up to the damage; its warnings (webui.Warner) are shown on its
// pages. Nothing here fails on a log's content.
package history
