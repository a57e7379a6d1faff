package mesosbackend

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/uri/fileserver"
)

// AddedFiles serves the files a job adds (backend.FileServer, Spark's
// addFile and addArchive) from the backend's file server, content
// addressed and behind the server's token. Executors fetch them with a
// per-executor grant (FileToken) that opens only the files their tasks
// were sent, never with the server's token.
//
// Both Mesos backends embed it: its methods are their backend.FileServer
// and backend.FileUnserver.
type AddedFiles struct{ Server *fileserver.Server }

// StartFiles starts the backend's file server (ServeExecutor with e's
// flint.executor.uri and flint.executor.sha256) and returns the executable
// executors run. e.Env gains what executors need to check their binary
// (Executable.Env), and an empty e.Command becomes "./" and the binary's
// name — or, when the image holds the binary (flint.mesos.executor.home),
// that directory and the name, and no launch fetches it. The server is
// kept whenever it serves, also with an error, for Close.
func (a *AddedFiles) StartFiles(e *Executor, addr Addr, log logrus.FieldLogger) (Executable, error) {
	fs, exe, err := ServeExecutor(e.URI, e.SHA256, addr, log)
	a.Server = fs
	if err != nil {
		return Executable{}, err
	}
	maps.Copy(e.Env, exe.Env())
	exe.inImage = e.Container.Home != ""
	switch {
	case e.Command != "":
	case exe.inImage:
		e.Command = path.Join(e.Container.Home, exe.Name)
	default:
		e.Command = "./" + exe.Name
	}
	return exe, nil
}

// CloseFiles stops the file server, if one started; a failure is logged
// (with the backend's prefix): nothing is left to do about it at Stop.
func (a AddedFiles) CloseFiles(ctx context.Context, log logrus.FieldLogger, prefix string) {
	if a.Server == nil {
		return
	}
	if err := a.Server.Close(ctx); err != nil {
		log.Warnf("%s: %v", prefix, err)
	}
}

// ServeFile publishes the local regular file at path.
func (a AddedFiles) ServeFile(path string) (url, sha256 string, size int64, err error) {
	if a.Server == nil {
		return "", "", 0, errors.New("no file server (the backend has not started)")
	}
	fu, err := a.Server.AddFile(path)
	if err != nil {
		return "", "", 0, err
	}
	return fu.URL, fu.SHA256, fu.Size, nil
}

// UnserveFile stops serving the file published at url (410 Gone).
func (a AddedFiles) UnserveFile(url string) bool { return a.Server != nil && a.Server.Remove(url) }

// FileToken is executor id's credential for the served files among refs:
// one grant per executor (owner "files/<id>"), widened with these files
// and alive until FetchGrantTTL after its last launch, so a file added
// while executors run reaches them and the token that agents or the master
// may have seen opens nothing for long.
func (a AddedFiles) FileToken(id string, refs []*backend.File) (string, error) {
	if a.Server == nil {
		return "", errors.New("no file server")
	}
	var served []fileserver.FileURL
	for _, r := range refs {
		if !r.Served {
			continue
		}
		fu, ok := a.Server.Published(r.URI)
		if !ok {
			return "", fmt.Errorf("file %q is not published by this driver's file server", r.Name)
		}
		served = append(served, fu)
	}
	if len(served) == 0 {
		return "", nil
	}
	return a.Server.Grant("files/"+id, FetchGrantTTL, served...)
}
