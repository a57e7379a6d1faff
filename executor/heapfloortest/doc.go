// Package heapfloortest proves, end to end, that every process running Flint's tasks holds
// the heap floor of internal/gcfloor (gcfloor.ForMemory of flint.executor.memory): the
// driver's process in local mode, and the executor processes the embedded master's agents
// start in coarse and fine mode (the backend names the floor in the executor's environment,
// executor.HoldHeapFloor holds it). It has tests only.
package heapfloortest
