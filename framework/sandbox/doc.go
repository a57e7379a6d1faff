// Package sandbox finds a Mesos task's sandbox and reads its files the way
// Mesos' own tools do: the master's /state says which agent ran the task,
// the agent's /state gives its work directory (the sandbox is Mesos'
// layout under it, run "latest"), and the agent's /files/read serves the
// files page by page. Real Mesos agents and minimesos agents serve the
// same endpoints, so `flint mesos logs` and the driver's report of an
// executor that died (the last lines of its stderr) work against both.
package sandbox
