// Package mesoslabel parses Spark's Mesos label lists (the syntax of
// spark.mesos.task.labels, spark.mesos.network.labels and
// spark.mesos.driver.labels) into Mesos Labels. It is the one parser of
// that syntax: the Mesos backends read flint.mesos.task.labels,
// flint.mesos.network.labels and flint.mesos.driver.labels with it, and
// the dispatcher (deploy/dispatcher) checks a submission's
// flint.mesos.driver.labels with it and labels the driver's Mesos task.
package mesoslabel
