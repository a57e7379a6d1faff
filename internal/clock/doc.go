// Package clock is the one time source Flint's timer-driven cores take
// (the minimesos master and agent's watchdog, mesosconn's Conn, the coarse
// gateway): Clock, with Real for production and Fake for tests.
//
// Tests use testing/synctest where they can: a bubble's clock serves a core
// that only waits on timers and channels. Fake exists for the tests it
// cannot serve — those that reach the core over real sockets (HTTP to a
// minimesos master, gRPC to the gateway, an agent's executor API) or run
// real processes (agents' executors): a goroutine blocked on network I/O
// or on a child process is not durably blocked, so a bubble's clock would
// never move while the core waits on them. Fake's time moves only through
// Advance, which fires what fell due before it returns, so a test knows
// exactly which timers ran.
package clock
