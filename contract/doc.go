// Package contract is the driver↔executor contract beyond the wire
// messages of proto/flintpb: the roles a Flint binary is started in, the
// environment variables backends set for executors (the binary's and the
// function registry's expected SHA-256 among them), the exit status an
// executor refusing its binary ends with, the Mesos labels and paths
// executors answer on, and the limits both sides hold to. Backends (coarse,
// fine, the Mesos backends' shared base) and executors (executor/coarseexec,
// executor/fineexec) both import it, so that backends need no executor package
// for these names and no name is retyped as a literal.
//
// It is a leaf: it imports no Flint package (no wire type either), so the
// configuration package can name the environment it reserves without
// depending on the wire format. The typed executor settings and their
// version are the wire package's (flintpb.ExecutorSettings,
// flintpb.EncodeSettings).
package contract
