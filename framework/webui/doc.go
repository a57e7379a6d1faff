// Package webui serves the operator's view of Flint applications over
// HTTP: Spark's monitoring REST API under /api/v1 (same paths and JSON field
// names where the concept exists; see docs/ui.md), server-rendered HTML
// pages (jobs, stages with their tasks and DAG, executors with links to
// their sandbox logs, environment, pending tasks' placement reasons) with an
// embedded stylesheet and no external assets, and Prometheus metrics on
// /metrics when given a handler for them.
//
// The package does no scheduling and keeps no state of its own: a Source
// hands it one uistore.Store per application (the driver's live one, or the
// history server's, replayed from event logs), and Options inject what only
// a live driver knows (placement explanations, executor sandboxes) and the
// clock. Handler returns an http.Handler; tests mount it on httptest.
//
// Every request needs the token (Options.Token) unless it is empty: as
// "Authorization: Bearer <token>", as a cookie set by a first visit with
// ?token=<token>, or as that query parameter itself. Compared in constant
// time; a missing or wrong token gets 401.
package webui
