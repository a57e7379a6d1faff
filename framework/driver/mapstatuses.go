package driver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/stagetask"
)

// How reducers learn their blocks (Spark's MapOutputTrackerMaster and
// MapOutputTrackerWorker): a reduce task's stage task names the shuffles
// it reads, its partitions and, per shuffle, a stagetask.StatusRef — the
// tracker's epoch at launch and, when the backend serves files
// (backend.FileServer: the Mesos backends), a file holding the shuffle's
// encoded snapshot, published once per (shuffle, epoch, outputs
// available) and listed among the task's files. Its executor fetches the
// file once (the executor's files store), decodes it once per epoch into
// its application's stagetask.MapStatuses, and every reduce task there
// cuts its blocks from it: a task description no longer grows with the
// map outputs (it carried ≈ 9 bytes per block before: 0.9 MB for a reducer
// over 100,000 maps). Without a file server (local mode, the simulation)
// the executor asks the driver in process (Driver.MapStatuses). The
// published files of a shuffle are unserved and deleted when the driver
// releases it, and all of them when it stops.

// MapStatuses is shuffle shuffleID's current map statuses: what an
// executor in the driver's process (local mode) loads into its
// stagetask.MapStatuses. Its epoch is the tracker's now, never older
// than any task launched before.
func (d *Driver) MapStatuses(_ context.Context, shuffleID int) (*mapoutput.Snapshot, error) {
	var snap *mapoutput.Snapshot
	var err error
	d.query(func(c *driverCore, _ time.Time) { snap, err = c.snapshots.get(c.dag.Tracker(), shuffleID) })
	if err != nil {
		return nil, fmt.Errorf("framework: %w", err)
	}
	return snap, nil
}

// StatusSource is MapStatuses as an in-process executor's source.
func (d *Driver) StatusSource() stagetask.StatusSource {
	return func(ctx context.Context, ref stagetask.StatusRef) (*mapoutput.Snapshot, error) {
		return d.MapStatuses(ctx, ref.ShuffleID)
	}
}

// snapshotCache keeps each shuffle's last snapshot (Spark's
// cachedSerializedStatuses): every executor asking at the same tracker
// version and epoch shares it (a snapshot is never mutated), instead of a
// copy of the shuffle's output records each. It is the driver core's.
type snapshotCache map[int]*mapoutput.Snapshot

// get is the shuffle's snapshot as the tracker holds it now.
func (sc snapshotCache) get(tr *mapoutput.Tracker, shuffleID int) (*mapoutput.Snapshot, error) {
	if s := sc[shuffleID]; s != nil && s.Version == tr.Version(shuffleID) {
		if s.Epoch != tr.Epoch() {
			// the same outputs: another shuffle's loss moved the epoch
			moved := *s
			moved.Epoch = tr.Epoch()
			s = &moved
			sc[shuffleID] = s
		}
		return s, nil
	}
	s, err := tr.Snapshot(shuffleID)
	if err != nil {
		return nil, err
	}
	sc[shuffleID] = s
	return s, nil
}

// statusFiles publishes shuffles' snapshots through the backend's file
// server. It is the driver core's (one goroutine).
type statusFiles struct {
	// b is the backend, asked for its file server when a file is
	// published: a wrapping backend (embedded) finds its Mesos backend's
	// only once started
	b       backend.Backend
	dir     string // created when first needed
	seq     int
	current map[int]*servedStatuses // by shuffle: the newest file
	served  map[int][]servedFile    // by shuffle: every file published
}

type servedStatuses struct {
	epoch   int64
	version uint64
	file    *backend.File
}

type servedFile struct{ url, path string }

func newStatusFiles(b backend.Backend) *statusFiles {
	return &statusFiles{b: b, current: map[int]*servedStatuses{}, served: map[int][]servedFile{}}
}

// serves reports whether the backend serves files.
func (f *statusFiles) serves() bool {
	_, ok := backend.As[backend.FileServer](f.b)
	return ok
}

// file is the served file of the shuffle's snapshot snap (the tracker's
// now), published when the epoch or the outputs changed since the last
// one.
func (f *statusFiles) file(snap *mapoutput.Snapshot) (*backend.File, error) {
	shuffleID, epoch := snap.ShuffleID, snap.Epoch
	if cur := f.current[shuffleID]; cur != nil && cur.epoch == epoch && cur.version == snap.Version {
		return cur.file, nil
	}
	data, err := snap.MarshalBinary()
	if err != nil {
		return nil, err
	}
	if f.dir == "" {
		if f.dir, err = os.MkdirTemp("", "flint-mapstatuses-"); err != nil {
			return nil, err
		}
	}
	f.seq++
	// unique per publication: an executor's files store refuses a name
	// it already holds with other content
	name := fmt.Sprintf("flint-mapstatuses-%d-e%d-%d", shuffleID, epoch, f.seq)
	path := filepath.Join(f.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	srv, ok := backend.As[backend.FileServer](f.b)
	if !ok {
		os.Remove(path)
		return nil, errors.New("the backend serves no files")
	}
	url, sum, size, err := srv.ServeFile(path)
	if err != nil {
		os.Remove(path)
		return nil, err
	}
	file := &backend.File{Name: name, URI: url, SHA256: sum, Size: size, Served: true}
	f.current[shuffleID] = &servedStatuses{epoch: epoch, version: snap.Version, file: file}
	f.served[shuffleID] = append(f.served[shuffleID], servedFile{url: url, path: path})
	return file, nil
}

// release unserves and deletes the shuffle's files.
func (f *statusFiles) release(shuffleID int) {
	unsrv, _ := backend.As[backend.FileUnserver](f.b)
	for _, sf := range f.served[shuffleID] {
		if unsrv != nil {
			unsrv.UnserveFile(sf.url)
		}
		os.Remove(sf.path)
	}
	delete(f.served, shuffleID)
	delete(f.current, shuffleID)
}

// close deletes every file (the driver stopped).
func (f *statusFiles) close() {
	if f.dir != "" {
		os.RemoveAll(f.dir)
	}
	clear(f.served)
	clear(f.current)
}

// statusRefs names, for every shuffle the reads cover, where its
// executor finds the statuses, and returns the files to add to the
// task's (the published ones).
func (c *driverCore) statusRefs(reads []stagetask.Read) ([]stagetask.StatusRef, []*backend.File) {
	var refs []stagetask.StatusRef
	var files []*backend.File
	tr := c.dag.Tracker()
	for _, r := range reads {
		seen := false
		for _, ref := range refs {
			seen = seen || ref.ShuffleID == r.ShuffleID
		}
		if seen {
			continue
		}
		ref := stagetask.StatusRef{ShuffleID: r.ShuffleID, Epoch: tr.Epoch()}
		if c.statusFiles != nil && c.statusFiles.serves() {
			snap, err := c.snapshots.get(tr, r.ShuffleID)
			var f *backend.File
			if err == nil {
				f, err = c.statusFiles.file(snap)
			}
			if err != nil {
				// the executor finds no statuses: the task's read is
				// missing and it reports a fetch failure if it opens it
				c.log.Warnf("map statuses of shuffle %d not served: %v", r.ShuffleID, err)
			} else {
				ref.File = f.Name
				files = append(files, f)
			}
		}
		refs = append(refs, ref)
	}
	return refs, files
}
