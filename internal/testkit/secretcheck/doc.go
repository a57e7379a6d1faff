// Package secretcheck is the one scenario that proves executor secrets
// reach executors and nothing else in both Mesos modes: coarse and fine
// tests run Check on minimesos. The secrets are a flint.executorEnv.*
// value that flint.redaction.regex marks (DB_PASSWORD) and a value-type
// Mesos secret (flint.mesos.executor.secret.values) exposed both as an
// environment variable and as a file in the sandbox. CheckReferences is the
// same for a reference-type secret (flint.mesos.executor.secret.names),
// which agents resolve from a file-backed secret store
// (containerizer.DirSecretResolver, as a Mesos agent's --secret_resolver
// module). Importing it registers its task functions, so the executors (the
// test binary) carry them.
package secretcheck
