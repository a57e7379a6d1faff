// Package tlspin secures the coarse-grained driver↔executor stream without
// any certificate infrastructure: the driver makes a self-signed certificate
// for its application (Server) and hands executors the SHA-256 of it in
// their launch environment, next to their token; executors accept exactly
// that certificate (Client), so the stream is encrypted and the executor
// knows it talks to its own driver, not to whoever answers on the address.
package tlspin
