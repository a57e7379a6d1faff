// Package redact is the one way Flint shows a URL, a line of text or an
// error that may hold a credential: every place that prints one — logs,
// errors, the UI's log pages, `flint mesos logs`, the report of a dead
// executor — goes through it, so a token is hidden the same way wherever it
// appears.
//
// The policy, for a URL (absolute, or a path with a query):
//   - user information (what precedes "@" in the authority) becomes Mask
//     entirely: a user name can itself be a token;
//   - every query parameter keeps its name and loses its value
//     ("?token=*****&x=*****"), and a bare query word becomes Mask: a
//     presigned URL's credentials come under names no list can predict;
//   - the fragment is masked the same way, except Flint's checksum fragment
//     ("#sha256=" and 64 hex digits), which is not a secret and names what
//     a fetch must match.
//
// Text applies URL to every URL it finds in free text (a sandbox's stderr,
// where Mesos' fetcher logs the URIs it fetches in clear), Error to an
// error's text while keeping its chain, Tail to the end of a log cut at any
// byte, and Writer to a stream, line by line, so a URL split across two
// reads is never shown in part. Mask is
// also what configuration secrets become (config.Redaction).
//
// The package never fails: input it cannot make sense of is masked, not
// shown.
package redact
