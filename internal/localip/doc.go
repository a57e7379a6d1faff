// Package localip answers one question for the driver and executors: which
// local IP does this host use to reach another host? The answer is the
// address to advertise to that host (the driver's address for executors
// when flint.driver.host is unset, an executor's shuffle and result
// servers for the driver). It asks the kernel's routing table by
// "connecting" a UDP socket, which sends no packet. Reached answers the
// same question for an executor's server in a container: the agent's
// host and mapped port, or the container's own address on a network of
// its own (Own), as libprocess decides it for Mesos' executors.
package localip
