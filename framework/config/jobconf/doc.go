// Package jobconf carries the job's configuration from the driver to its executors and into
// every task's context, as Spark hands executors the application's spark.* properties.
//
// The driver sends every effective flint.* setting (config.Config.Effective, declared keys and
// prefix families alike, not a fixed list): coarse executors receive them with their
// registration answer over the authenticated gateway stream, fine executors in
// ExecutorInfo.data. Settings and secrets travel apart (Properties.Settings,
// Properties.Secrets) and never as environment variables. The driver's own credentials
// (flint.authenticate.secret, flint.mesos.secret and its file) never leave the driver: an
// executor holding them could impersonate the driver. Storage credentials
// (storage.WithheldFromExecutors: flint.s3.accessKey…) are not sent here either: the Mesos
// backends give them to executors as Mesos secrets (mesosbackend).
//
// The executor rebuilds a typed *config.Config from them (FromProperties: values validated by
// the key table, defaults filled in), logs the effective settings at debug level with secrets
// redacted (LogEffective), and puts the Config in every task's context (NewContext); task code
// reads it with FromContext, through framework.TaskConfig.
package jobconf
