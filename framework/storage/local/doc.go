// Package local is storage's "file" scheme: plain paths and file:// URIs on a file system
// the driver and the executors share (or one host). Importing it registers the scheme.
//
// A file's version is its size and modification time. Staged writes go to a file under
// _temporary in the output's directory and are published by rename, so a part file appears
// whole or not at all; AbortStaged removes _temporary.
package local
