// Package browsertest holds the web UI's browser tests: a driver runs real
// jobs, headless Chromium (Debian's chromium package, driven by chromedp)
// loads every page, and the tests assert on the rendered DOM. With
// -screenshots DIR they also write the PNGs docs/ui.md shows.
package browsertest
