// Package mesostest holds the test support the coarse and fine backends'
// integration tests share: a test logger whose output is shown only when the
// test fails, an in-process Mesos cluster (minimesos), run markers, and
// finding (and reaping) executor processes through /proc.
package mesostest
