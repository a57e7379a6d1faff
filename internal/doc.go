// Package internal holds Flint's private code in three kinds, one directory each:
//
//   - internal/* (this level): runtime utilities the shipped binaries use — backoff, clock,
//     driverseam, localip, mailbox, plural, redact, uuid, varenc.
//   - internal/devtools/*: developer tools that are not tests — the deterministic simulation
//     (sim, `make simulate`), benchmark baselines (benchbase, grpcecho), benchmark inputs
//     (benchdata) and the CPU load generator of `make stress` (cpuburn).
//   - internal/testkit/*: test kits shared by several packages' tests — the backend harness,
//     minimesos clusters for tests (mesostest), the three-mode Context runner, the S3 server,
//     golden-script runner, waiting helpers and the scenario checks (…check).
//
// No shipped code path imports internal/testkit; `flint`'s hidden developer subcommands are
// the only shipped users of internal/devtools.
package internal
