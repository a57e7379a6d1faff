package mesosbackend

import (
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/task"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// FetchGrantTTL bounds a launch's fetch credential when its executor never
// registers (the agent could not start it, or it died first). Agents fetch
// before they start an executor and Mesos destroys an executor that has
// not registered within a minute (--executor_registration_timeout), so
// five minutes leave room for a slow fetch and no more.
const FetchGrantTTL = 5 * time.Minute

// Executable is the executor binary agents fetch and how every launch
// names it.
type Executable struct {
	URI    string // CommandInfo.URI value, with no credential in it
	Name   string // its file in the sandbox (output_file): the last path segment, no query or fragment
	Log    string // URI as logged
	SHA256 string // what executors check their binary against (EnvBinarySHA256); "" = not checked

	inImage bool // the image holds the binary (flint.mesos.executor.home): nothing to fetch

	files  *fileserver.Server // serves the binary; nil for a configured URI
	served fileserver.FileURL
	log    logrus.FieldLogger
}

// URIs is the CommandInfo.URIs of executor id's launch: the executor
// binary, then extra (flint.mesos.uris). Every URI names its file with
// output_file, so no query or fragment reaches a file name on a Mesos
// agent (whose fetcher names files after the whole last segment of the
// URI otherwise). A served binary's URL carries a credential of its own
// (fileserver.Server.Grant), valid for that file only, until Registered(id) or
// FetchGrantTTL: the agent logs every URI it fetches into the sandbox,
// so that credential must be worthless once the executor is up. Such a
// URL is unique to the launch, so it is not cached (the agent's cache is
// keyed by the URI and would never be hit). When the image holds the
// binary, only extra is fetched.
func (e Executable) URIs(id string, extra []string) []mesos.CommandInfo_URI {
	if e.inImage {
		return extraURIs(nil, extra)
	}
	yes, no := true, false
	name := e.Name
	exe := mesos.CommandInfo_URI{Value: e.URI, Executable: &yes, Extract: &no, Cache: &yes, OutputFile: &name}
	switch {
	case e.files != nil:
		exe.Cache = &no
		token, err := e.files.Grant(id, FetchGrantTTL, e.served)
		if err != nil {
			// Only a closed server refuses: the driver is stopping.
			e.log.Warnf("no fetch credential for executor %s (%v): its fetch will be refused", id, err)
		} else {
			exe.Value = WithToken(e.URI, token)
		}
	case IsArchive(e.URI):
		exe.Executable, exe.Extract = &no, &yes
	}
	return extraURIs([]mesos.CommandInfo_URI{exe}, extra)
}

// extraURIs appends flint.mesos.uris, each named by its last path segment.
func extraURIs(uris []mesos.CommandInfo_URI, extra []string) []mesos.CommandInfo_URI {
	for _, u := range extra {
		n := URIBase(u)
		uris = append(uris, mesos.CommandInfo_URI{Value: u, OutputFile: &n})
	}
	return uris
}

// Registered ends executor id's fetch credential: it has its binary.
func (e Executable) Registered(id string) {
	if e.files != nil {
		e.files.Revoke(id)
	}
}

// Env is what executors need in their environment to check their binary
// and their function registry (which holds every dataset job) against
// the driver's.
func (e Executable) Env() map[string]string {
	env := map[string]string{contract.EnvRegistrySHA256: task.Default().Fingerprint()}
	if e.SHA256 != "" {
		env[contract.EnvBinarySHA256] = e.SHA256
	}
	return env
}

// ExitExplained words an executor's exit status (a wait status, as Mesos
// reports it in FAILURE events) when it is one Flint's executors use
// deliberately, or returns "".
func ExitExplained(waitStatus int) string {
	if waitStatus&0x7f != 0 || waitStatus>>8&0xff != contract.ExitBinaryMismatch {
		return ""
	}
	return "its binary failed the SHA-256 check (exit status 65): the file the agent fetched is not the executor binary the driver expects, or it registers other functions and jobs; see the sandbox's stderr"
}
