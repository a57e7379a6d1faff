// Package failovercheck is the driver-failover scenario both Mesos modes'
// tests run: a driver process killed while its tasks run is replaced by a
// driver started with flint.mesos.driver.frameworkId, which takes over the
// framework, runs jobs at once under ids of its own and kills what the dead
// driver left; and a driver stopped with flint.mesos.driver.failover keeps
// its framework for such a successor.
package failovercheck
