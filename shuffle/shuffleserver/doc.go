// Package shuffleserver serves an executor's shuffle blocks to the reduce
// tasks of its application, and is the client side of that protocol.
//
// A block is one GET:
//
//	GET /shuffle/v1/<application>/<shuffle>/<map>/<reduce>
//	Authorization: Bearer <Token(secret, application)>
//
// answered with the block's bytes (package shuffleblock's frames, exactly
// as on disk) and a Content-Length. Over plaintext HTTP the bytes go with
// sendfile(2) — net/http hands an io.LimitedReader over the data file to
// the TCP connection — so serving costs no copy through user space; TLS
// cannot, and docs/benchmarks.md gives both figures.
//
// Security is on by default, with no certificate infrastructure, as for
// the driver↔executor traffic: each server makes a self-signed
// certificate (framework/tlspin) and its Address carries the
// certificate's SHA-256, so a reducer that got the address from the
// driver's map-output tracker accepts only that server. Requests need the
// application's shuffle token, an HMAC of the application secret, so no
// other application (which has another secret) and no unauthenticated
// peer reads a block; a request naming another application is refused
// even with a valid token. Tokens are compared in constant time and never
// logged.
//
// An Address also names the store's directory, so a reducer on the same
// host reads the files directly instead of over the network (Spark's
// host-local disk reads); local mode reads its own store that way.
package shuffleserver
