// Package s3server starts a real S3-compatible server for tests: Versity's versitygw
// (github.com/versity/versitygw, at the version the Makefile pins) with its posix backend
// in a temporary directory, on a loopback port, stopped when the test ends. It is never an
// in-process imitation of the S3 API.
//
// The binary is bin/versitygw at the module's root (`make versitygw` builds it; `make test`
// and CI build it first) or the path in $FLINT_VERSITYGW. A test that asks for the server
// when the binary is missing fails, naming the command that builds it: nothing is skipped.
//
// The server's output is kept with the suite's logs ($FLINT_TEST_LOG_DIR) so the secret
// scan covers it.
package s3server
