// Package embedded is Flint's `embedded` master (flint.master=embedded): the
// driver starts a minimesos master and flint.embedded.agents agents in its
// own process, on loopback, and runs the coarse-grained Mesos backend
// against it. Executors are real processes started by the agents (the
// driver's own binary, fetched from its file server), exactly as on a real
// Mesos cluster, so a job behaves the same here and on `mesos://`.
//
//	driver process
//	┌────────────────────────────────────────────────────────────┐
//	│ framework.Context ─► embedded.Backend ─► coarse.Backend     │
//	│                          │ starts          │ Mesos v1 API   │
//	│                          ▼                 ▼                │
//	│                 cluster: minimesos master ◄── agents (2)    │
//	└──────────────────────────────────────────────│─────────────┘
//	                       fork/exec per executor  ▼
//	            executor processes (FLINT_ROLE=coarse-executor) ──gRPC──► driver gateway
//
// The cluster is sized from the machine (CPUs split across agents, memory
// split but at least one executor's worth per agent; see SizeFor), offers
// freed resources at once (AllocateOnRelease) and allocates every
// flint.embedded.allocationInterval, for low job start latency. Stop stops
// the Mesos backend first (executors exit, the framework is torn down), then
// the agents and the master (flint.mesos.coarse=false runs the fine-grained
// backend on it the same way).
//
// Sandboxes: without flint.embedded.workDir the agents work in a fresh
// directory under the system temp dir owned by the driver (workdir.go). Stop
// removes it, unless an executor or task failed: then it stays (marked
// KEPT) and Stop says where, so the executors' stderr can be read. The next
// driver removes the directories of drivers that died without stopping;
// GC (`flint mesos gc`) removes those and the kept ones. Agents are never
// excluded after executor failures here (they are all this one host).
package embedded
