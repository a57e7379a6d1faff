// Package progress draws Spark's console progress bar for Flint jobs.
//
// A Bar polls a Source of active stages every Interval (200ms) and shows those running for more
// than FirstDelay (500ms). On a terminal it redraws one line with '\r', up to three stages side
// by side sharing the width, e.g.
//
//	[Stage 0:=====>                  (45 + 8) / 100][Stage 1:>         (0 + 4) / 10]
//
// and clears the line when a stage finishes. Elsewhere (log files, CI) it prints plain lines,
// at most every PlainInterval (5s) and only for stages whose counts changed, plus one final line
// per finished stage. Render, PlainLine and PlainFinal are the pure formatting functions.
package progress
