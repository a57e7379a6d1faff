package dataset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/recordcodec"
)

// Broadcast is a read-only value the driver sends once per executor
// (Spark's Broadcast): NewBroadcast encodes it on the driver, the
// driver's file server serves it in compressed, checksummed chunks, and
// each executor fetches it with the first task that runs after it was
// made, decodes it at the first Value call and keeps it for the tasks
// that follow. Destroy releases it everywhere.
type Broadcast[T any] struct {
	b     *Builder
	codec recordcodec.Codec[T]
	meta  broadcastMeta

	// driver side: the value and the file the server publishes
	value T
	dir   string

	mu          sync.Mutex
	destroyed   bool
	destroySite string // where Destroy was called, for the errors of later uses
}

// ErrBroadcastDestroyed: a broadcast was destroyed again, or read, after
// Destroy; the message names where Destroy was called (as Spark's does).
var ErrBroadcastDestroyed = errors.New("dataset: broadcast used after Destroy")

// broadcastMeta is the handle frozen with the job: what an executor
// rebuilding the graph gets instead of the value.
type broadcastMeta struct {
	Name  string // the added file's name, unique per run
	Size  int64  // encoded value's bytes, uncompressed
	Codec string
	Seq   uint64 // the driver's publishedSeq when it was added
}

// publishedSeq numbers the broadcasts (and payload parts) a driver's
// Context added (its environment's: state): a task's job carries the
// number reached when its action was planned (jobWire.BroadcastSeq), so
// an executor knows that any broadcast up to it which the task does not
// list was released before the task's stage was submitted. The lock is
// held while a broadcast is added, so every number handed out is added
// (or failed) once it can be read; another Context's additions neither
// wait for it nor move its numbers.
type publishedSeq struct {
	sync.Mutex
	seq uint64
}

// last is the number of the last broadcast the Context added.
func (p *publishedSeq) last() uint64 {
	p.Lock()
	defer p.Unlock()
	return p.seq
}

// broadcastHandle is a Builder's view of its broadcasts, whatever T.
type broadcastHandle interface {
	fileName() string
	seq() uint64
	release()
	isDestroyed() bool
}

// NewBroadcast makes v a broadcast variable of the job's run: call it in
// the job body and read it with Value inside closures. On the driver it
// encodes v with the record codec of T (recordcodec.For: fast paths, then
// encoding.BinaryMarshaler, then gob), writes it in compressed chunks and
// adds the file to the Context (Context.AddFile), so every task of a
// stage submitted later lists it; executors rebuilding the graph get the
// frozen handle, never a recomputation. A value that cannot be encoded
// fails the run's next action, and so does one the executors would not
// get as it is (a func, a chan, an unsafe.Pointer, a non-zero unexported
// field, a cycle: ErrValueCannotTravel, naming the field, its type and
// why), before any task runs.
func NewBroadcast[T any](b *Builder, v T) *Broadcast[T] {
	bc := &Broadcast[T]{b: b, codec: recordcodec.For[T]()}
	key := fmt.Sprintf("flint.broadcast.%d", len(b.broadcasts))
	b.broadcasts = append(b.broadcasts, bc)
	b.freeze(key, func() any {
		bc.value = v
		rules := recordRules
		if bc.codec.Name() == "gob" {
			rules = gobRules
		}
		if err := checkTravel(fmt.Sprintf("broadcast#%d", len(b.broadcasts)-1), v, rules); err != nil {
			b.fail(fmt.Errorf("%w: job %q: %w", ErrValueCannotTravel, b.job, err))
			return broadcastMeta{}
		}
		if b.run == nil {
			return broadcastMeta{}
		}
		m, err := bc.publish(fmt.Sprintf("flint-broadcast-%s-%d.fbc", b.run.runID, len(b.broadcasts)-1))
		if err != nil {
			b.fail(fmt.Errorf("dataset: job %q: broadcast %d: %w", b.job, len(b.broadcasts)-1, err))
		}
		return m
	}, &bc.meta)
	return bc
}

// publish writes the encoded value to a file of its own and adds it.
func (bc *Broadcast[T]) publish(name string) (broadcastMeta, error) {
	raw, err := bc.codec.Append(nil, bc.value)
	if err != nil {
		return broadcastMeta{}, fmt.Errorf("encode: %w", err)
	}
	published := &bc.b.st.published
	published.Lock()
	defer published.Unlock()
	published.seq++
	m := broadcastMeta{Name: name, Size: int64(len(raw)), Codec: bc.codec.Name(), Seq: published.seq}
	if bc.dir, err = os.MkdirTemp("", "flint-broadcast-"); err != nil {
		return m, err
	}
	p := filepath.Join(bc.dir, name)
	if err := os.WriteFile(p, encodeChunks(raw, broadcastChunk), 0o600); err != nil {
		return m, err
	}
	if err := bc.b.fc.AddFile(p); err != nil {
		return m, err
	}
	return m, nil
}

// broadcastChunk is the uncompressed size of a chunk.
const broadcastChunk = 1 << 20

// Value is the broadcast value: the driver's own on the driver; on an
// executor the copy it fetched, decoded at the first call and shared by
// every later task there (treat it as read-only). It panics after Destroy
// and when the copy cannot be read (the task fails with the reason).
func (bc *Broadcast[T]) Value() T {
	if site, ok := bc.destroyedAt(); ok {
		panic(fmt.Sprintf("%v: job %q: broadcast %s read at %s, destroyed at %s", ErrBroadcastDestroyed, bc.b.job, bc.meta.Name, callSite(), site))
	}
	if bc.b.Driver() {
		return bc.value
	}
	v, err := bc.b.st.loaded.load(bc.meta.Name, func(p string) (any, error) {
		enc, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		raw, err := decodeChunks(enc)
		if err != nil {
			return nil, err
		}
		if int64(len(raw)) != bc.meta.Size {
			return nil, fmt.Errorf("%w: %d bytes decoded, the driver encoded %d", errCorruptBroadcast, len(raw), bc.meta.Size)
		}
		return bc.codec.Decode(raw)
	})
	if err != nil {
		panic(fmt.Sprintf("dataset: job %q: broadcast %s: %v", bc.b.job, bc.meta.Name, err))
	}
	return v.(T)
}

// Destroy releases the broadcast: the driver stops listing it in tasks,
// its file server stops serving it (410 Gone) and the driver removes its
// file; an executor drops its decoded value and its fetched copy at its
// next task (dropReleased). Value panics afterwards, and a second
// Destroy returns ErrBroadcastDestroyed; both name where Destroy was
// called, as Spark's errors do. Broadcasts a run did not destroy are
// released when it ends.
func (bc *Broadcast[T]) Destroy() error {
	site := callSite()
	bc.mu.Lock()
	if bc.destroyed {
		first := bc.destroySite
		bc.mu.Unlock()
		return fmt.Errorf("%w: job %q: broadcast %s destroyed again at %s, destroyed at %s", ErrBroadcastDestroyed, bc.b.job, bc.meta.Name, site, first)
	}
	bc.destroyed, bc.destroySite = true, site
	bc.mu.Unlock()
	bc.release()
	return nil
}

// destroyedAt is where Destroy was called, if it was.
func (bc *Broadcast[T]) destroyedAt() (string, bool) {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return bc.destroySite, bc.destroyed
}

func (bc *Broadcast[T]) fileName() string { return bc.meta.Name }

func (bc *Broadcast[T]) seq() uint64 { return bc.meta.Seq }

func (bc *Broadcast[T]) isDestroyed() bool {
	bc.mu.Lock()
	defer bc.mu.Unlock()
	return bc.destroyed
}

func (bc *Broadcast[T]) release() {
	if bc.meta.Name == "" {
		return
	}
	if bc.b.Driver() {
		if bc.b.fc != nil {
			bc.b.fc.RemoveFile(bc.meta.Name)
		}
		if bc.dir != "" {
			os.RemoveAll(bc.dir)
		}
		return
	}
	bc.b.st.loaded.drop(bc.meta.Name)
}

// loadedStore is, on an executor, the application's decoded broadcasts
// and payload parts (its environment's: state), by file name.
type loadedStore struct {
	sync.Mutex
	m map[string]*loadedBroadcast
}

type loadedBroadcast struct {
	seq  uint64
	path string // the fetched copy (files.Store)
	once sync.Once
	v    any
	err  error
}

// noteBroadcastFiles records where this executor's copies of b's
// broadcasts are (a task's files), before the task runs.
func (loaded *loadedStore) noteBroadcastFiles(ctx context.Context, b *Builder) error {
	for _, h := range b.broadcasts {
		name := h.fileName()
		if name == "" || h.isDestroyed() {
			continue
		}
		loaded.Lock()
		e := loaded.m[name]
		loaded.Unlock()
		if e != nil {
			continue
		}
		p, err := framework.TaskContextOf(ctx).File(name)
		if err != nil {
			return fmt.Errorf("dataset: job %q: broadcast %s: %w", b.job, name, err)
		}
		loaded.note(name, h.seq(), p)
	}
	return nil
}

// note records where this executor's copy of name is, numbered seq,
// unless it has one.
func (loaded *loadedStore) note(name string, seq uint64, path string) {
	loaded.Lock()
	defer loaded.Unlock()
	if loaded.m[name] == nil {
		loaded.m[name] = &loadedBroadcast{seq: seq, path: path}
	}
}

// load is name's value, decoded from the executor's copy by load at the
// first call.
func (loaded *loadedStore) load(name string, load func(path string) (any, error)) (any, error) {
	loaded.Lock()
	e := loaded.m[name]
	loaded.Unlock()
	if e == nil {
		return nil, fmt.Errorf("no copy on this executor (the task did not list it)")
	}
	e.once.Do(func() { e.v, e.err = load(e.path) })
	return e.v, e.err
}

// dropReleased drops the copies of broadcasts the driver released
// (destroyed, or their run ended) before this task's stage was
// submitted: those numbered up to the task's BroadcastSeq that its files
// no longer list. Later broadcasts (another run's, added after this
// action was planned) are kept whether listed or not.
func (loaded *loadedStore) dropReleased(ctx context.Context, upTo uint64) {
	var gone []string
	loaded.Lock()
	for name, e := range loaded.m {
		if e.seq != 0 && e.seq <= upTo {
			if _, err := framework.TaskContextOf(ctx).File(name); err != nil {
				gone = append(gone, name)
			}
		}
	}
	loaded.Unlock()
	for _, name := range gone {
		loaded.drop(name)
	}
}

// drop forgets the executor's copy of name and removes the file.
func (loaded *loadedStore) drop(name string) {
	loaded.Lock()
	e := loaded.m[name]
	delete(loaded.m, name)
	loaded.Unlock()
	if e != nil && e.path != "" {
		os.Remove(e.path)
	}
}

// dropAll forgets every copy and removes the files (the application
// ended in this process).
func (loaded *loadedStore) dropAll() {
	loaded.Lock()
	m := loaded.m
	loaded.m = map[string]*loadedBroadcast{}
	loaded.Unlock()
	for _, e := range m {
		if e.path != "" {
			os.Remove(e.path)
		}
	}
}
