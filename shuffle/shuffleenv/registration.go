package shuffleenv

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/shuffle/shuffleserver"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// registration is an executor's registration with its agent's shuffle
// service, kept current across the service's restarts, as Spark's
// executors register with the agent's external shuffle service when they
// start and again when it comes back. A service writes its InfoFile
// (address and certificate pin) each time it starts; current notices a
// new one, registers the application with that service (a service that
// died with its files lost the application's directory and token) and
// hands out its address from then on. The files are the rendezvous: no
// timer, no request to the service, one stat per call while nothing
// changed. Safe for concurrent use.
type registration struct {
	set  Settings
	root string // the executor's store in the service's directory
	log  logrus.FieldLogger

	mu   sync.Mutex
	addr shuffleserver.Address // the service's, with the executor's store
	info os.FileInfo           // the InfoFile addr was read from
	gone bool                  // the last look found no service running (logged once)
}

// infoPath is the service's InfoFile.
func (r *registration) infoPath() string {
	return filepath.Join(r.set.ServiceDir, shuffleservice.InfoFile)
}

// register reads the service's address and registers the application
// with it (at the executor's start: an error stops the executor).
func (r *registration) register() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	info, err := os.Stat(r.infoPath())
	if err != nil {
		_, err = shuffleservice.ReadInfo(r.set.ServiceDir) // the error that names what to run
		return err
	}
	return r.registerLocked(info)
}

// registerLocked registers with the service whose InfoFile info is
// (shuffleservice.Register checks the file's content) and takes its
// address.
func (r *registration) registerLocked(info os.FileInfo) error {
	addr, err := shuffleservice.ReadInfo(r.set.ServiceDir)
	if err != nil {
		return err
	}
	if err := shuffleservice.Register(r.set.ServiceDir, r.set.AppID, r.set.Token); err != nil {
		return err
	}
	// a service that died with its files took the store's directory too
	if err := os.MkdirAll(r.root, 0o700); err != nil {
		return fmt.Errorf("shuffleenv: %w", err)
	}
	addr.Dir, addr.Executor = r.root, r.set.ExecutorID
	r.addr, r.info, r.gone = addr, info, false
	return nil
}

// current is the address of the service running now, registered with;
// while no service runs, or a new one cannot be registered with, the last
// one's (an output reported then names a service that does not serve it:
// its reducers' fetch failures make the driver recompute it).
func (r *registration) current() shuffleserver.Address {
	r.mu.Lock()
	defer r.mu.Unlock()
	info, err := os.Stat(r.infoPath())
	switch {
	case err != nil:
		if !r.gone {
			r.gone = true
			r.log.Warnf("shuffleenv: the agent's shuffle service %s is gone (%v); outputs written until one starts again name it and will be recomputed", r.addr.BaseURL(), err)
		}
		return r.addr
	case sameInfo(info, r.info):
		return r.addr
	}
	old := r.addr.BaseURL()
	if err := r.registerLocked(info); err != nil {
		r.log.WithError(err).Warnf("shuffleenv: cannot register with the agent's restarted shuffle service; outputs still name %s", old)
		return r.addr
	}
	r.log.Infof("shuffleenv: the agent's shuffle service restarted: registered with %s (was %s); new outputs name it", r.addr.BaseURL(), old)
	return r.addr
}

// sameInfo reports whether a and b are the same InfoFile, unchanged: a
// service writes a new file (a rename) each time it starts.
func sameInfo(a, b os.FileInfo) bool {
	return b != nil && os.SameFile(a, b) && a.ModTime().Equal(b.ModTime()) && a.Size() == b.Size()
}
