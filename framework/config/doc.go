// Package config is Flint's configuration, the counterpart of Spark's SparkConf.
//
// One table (see Keys) declares every key: its Spark-style name under "flint.", kind (string,
// int, bool, float, size, duration, enum, master URL), default, documentation, whether it is
// secret, and for sizes and durations the unit a bare number is in. Prefix keys such as
// "flint.executorEnv." accept any suffix and keep its case. The reference page
// docs/configuration.md is generated from the table (Markdown, go run ./cmd/flint gen-config-doc).
//
// Values are layered, lowest first: defaults < config file < FLINT_* environment variables <
// --conf key=value flags < Set. Defaults and the file live in a viper instance (viper decodes
// the file through codecs of this package that also record each key's original case, which
// viper's case-insensitive store drops but executorEnv names need). The environment, flag and
// code layers are kept here: the environment is passed in (LoadOptions.Environ) rather than read
// from the process, and every value remembers its source so that Load's errors can say where a
// bad value came from.
//
// Load validates every effective value and joins all problems into one error; after that the
// typed getters (String, Int, Bool, Float64, Size, Duration) cannot fail. Asking a getter for
// an undeclared key, or for a key of another kind, is a programmer error and panics.
package config
