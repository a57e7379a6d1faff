// Package minimesostest starts an in-process minimesos master on
// 127.0.0.1:0 with fast test defaults (heartbeat 1s, allocation interval
// 50ms, agent pings every 100ms), plugs agents into it (FakeAgent, or
// real in-process agents through WithAgents) and exposes the master's
// test-only fault hooks, plus RestartMaster (a new master on the same
// address with the same id while the agents keep running) and FakeClock
// (a manual master.Clock for timer-driven tests). Close waits for
// everything it started.
package minimesostest
