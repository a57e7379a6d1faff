// Package integration holds end-to-end tests of minimesos: a framework
// written with mesos-go's scheduler client (httpcli + httpsched, protobuf
// and JSON codecs) drives the real master and real agents together —
// in-process agents started by cluster.Start or by the tests, and a remote
// agent over the link HTTP transport — launching command tasks, task
// groups and a custom executor written with mesos-go's executor library
// (minimesostest/testexecutor, run by the test binary itself). The tests cover status update ordering and
// retries, kills, executor shutdown, agent loss, agent restart with
// checkpointing, framework failover and teardown, and check that no
// process outlives its agent. There is no non-test code.
package integration
