// Package jobconfcheck is the scenario both Mesos modes' tests run to show
// that the job's configuration reaches tasks through their context while
// the driver's secret reaches neither the tasks nor any executor's
// environment.
package jobconfcheck
