// Package shuffleconf is the driver's side of an executor's shuffle
// settings: the names of the properties a backend's launch settings carry
// (flintpb.ExecutorSettings.shuffle), the application id and shuffle token
// derived from the application secret, the shuffle memory from the
// configuration, and DriverProperties, what the Mesos backends send every
// executor. The executor reads the properties back into its shuffle
// environment (shuffle/shuffleenv.SettingsFromProperties); the backends
// import this package, not the executor's.
package shuffleconf
