// Package httpfs is storage's read-only "http" and "https" schemes: a URL names one file
// (there is no listing), its size comes from a HEAD request, byte ranges from Range requests,
// and its version from the ETag the server gives (checked against each range's answer).
// Importing it registers both schemes.
package httpfs
