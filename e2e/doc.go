// Package e2e holds Flint's Docker end-to-end suites: real `flint` binaries
// in their own containers on a private Docker network, so that the minimesos
// master, each agent and the driver are separate hosts with their own IP
// addresses. Executors are processes the agents launch inside their
// containers — or, with the agents' Docker containerizer, sibling
// containers the agents start through the host's Docker socket on the same
// network; they fetch the executor binary from the driver's file server
// (or find it in their image) and (coarse mode) connect back to the
// driver's gateway across the network.
//
// The suites are ordinary Go tests (go test ./e2e/) driven by
// github.com/ory/dockertest/v3. They need a reachable Docker daemon and
// nothing from a registry: the image is built FROM scratch around a static
// binary compiled by the test (see deploy/docker/Dockerfile and docs/e2e.md).
// Without Docker the tests fail, naming what is missing.
package e2e
