// Package logging builds the logrus loggers of Flint's driver and executors from the
// flint.log.level and flint.log.format settings: text (coloured only when writing to a
// terminal) or JSON, and a hook that redacts the values of secret configuration keys from
// messages and fields should they ever be logged.
package logging
