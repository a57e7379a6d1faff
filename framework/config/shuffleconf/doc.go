// Package shuffleconf is the driver's side of an executor's shuffle
// settings: the application id and shuffle token derived from the
// application secret, the shuffle memory from the configuration, and
// DriverSettings, the typed flintpb.ShuffleSettings the Mesos backends send
// every executor in flintpb.ExecutorSettings.shuffle (built here and
// nowhere else), with the codec's wire form (Codec, Compression). The
// executor reads them back into its shuffle environment
// (shuffle/shuffleenv.SettingsFromWire); the backends import this package,
// not the executor's. The package framework/config itself stays free of
// wire types.
package shuffleconf
