// Package jsonlines reads JSON lines files (one JSON object per line, also called NDJSON;
// Spark's JSON source) into a dataset.Dataset[T] of a Go struct T (Read) and writes one
// (Save), with encoding/json.
//
// Reading splits files as dataset.TextFile does (byte ranges aligned to lines, compressed
// files whole, any storage scheme). Each line is decoded into a T by encoding/json's rules
// (field names or `json` tags, matched ignoring case; keys T lacks ignored; a key the line
// lacks leaves its field zero — use a pointer field to tell missing from zero); blank lines
// are skipped. A line that is not a JSON object, or has a value of the wrong type for its
// field, is malformed and handled by Options.Mode (package formats): fail naming file and
// line, drop and count, or keep marked in T's *formats.Corrupt field (tag that field
// `json:"-"` so that Save does not write it).
//
// Save writes one object per line through the commit protocol of dataset.SaveFiles
// (part-00000.json, .json.gz with dataset.Compress).
package jsonlines
