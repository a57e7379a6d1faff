package dataset

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"

	"github.com/flint-mesos/flint/framework"
)

// A task's payload is its jobWire: the job's arguments, its frozen values
// (Value, listings, broadcast handles) and the results of the run's
// earlier actions, which an executor needs to replay the body. Sent with
// every task, a large part would cost its size per task and could exceed
// what the backend delivers (fine mode's 4 MiB LAUNCH record, coarse
// mode's gRPC message). So, as Spark broadcasts every task binary, parts
// of at least payloadInline bytes — and the largest others while the
// rest is over payloadBudget — travel as files added to the Context:
// fetched once per executor (each part once per run, whichever actions
// carry it), decoded once per executor and released with the run like a
// broadcast. What remains is checked against the backend's limit before
// any task runs.
const (
	payloadInline = 16 << 10
	payloadBudget = 256 << 10
	// payloadRoom is what a stage task's other fields (its blocks to
	// read, ids) may take of the backend's limit.
	payloadRoom = 256 << 10
	// argsPart is the key of the job's arguments among a wire's parts.
	argsPart = "\x00args"
)

// payloadRef names a part of a task's payload shipped as a file.
type payloadRef struct {
	Name string // the added file's name
	Size int    // the part's bytes
	Seq  uint64 // the driver's publishedSeq when it was added
}

// payloads is what a run published: the files by content, and the
// directory holding them on the driver.
type payloads struct {
	mu    sync.Mutex
	refs  map[[32]byte]payloadRef
	dir   string
	names []string
}

// shipLarge moves w's large parts (b's arguments and values) to files and
// leaves the others in w.
func (r *runner) shipLarge(b *Builder, w *jobWire) error {
	parts := make(map[string][]byte, len(b.values)+1)
	for k, v := range b.values {
		parts[k] = v
	}
	parts[argsPart] = b.args
	keys := make([]string, 0, len(parts))
	total := 0
	for k, v := range parts {
		keys = append(keys, k)
		total += len(v)
	}
	// largest first (then by key, so the choice is the same every time)
	slices.SortFunc(keys, func(a, c string) int {
		return cmp.Or(cmp.Compare(len(parts[c]), len(parts[a])), cmp.Compare(a, c))
	})
	w.Values = make(map[string][]byte, len(b.values))
	for _, k := range keys {
		v := parts[k]
		if len(v) >= payloadInline || (total > payloadBudget && len(v) > 0) {
			ref, err := r.publishPart(v)
			if err != nil {
				return fmt.Errorf("dataset: job %q: ship %s to the executors: %w", b.job, partName(k), err)
			}
			if w.Parts == nil {
				w.Parts = map[string]payloadRef{}
			}
			w.Parts[k] = ref
			total -= len(v)
			continue
		}
		if k == argsPart {
			w.Args = v
		} else {
			w.Values[k] = v
		}
	}
	return nil
}

func partName(k string) string {
	if k == argsPart {
		return "the job's arguments"
	}
	return fmt.Sprintf("frozen value %q", k)
}

// publishPart adds raw as a file of the run's, once per content.
func (r *runner) publishPart(raw []byte) (payloadRef, error) {
	p := &r.payloads
	p.mu.Lock()
	defer p.mu.Unlock()
	sum := sha256.Sum256(raw)
	if ref, ok := p.refs[sum]; ok {
		return ref, nil
	}
	if p.dir == "" {
		dir, err := os.MkdirTemp("", "flint-payload-")
		if err != nil {
			return payloadRef{}, err
		}
		p.dir = dir
	}
	name := fmt.Sprintf("flint-payload-%s-%x.fbc", r.runID, sum[:12])
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, encodeChunks(raw, broadcastChunk), 0o600); err != nil {
		return payloadRef{}, err
	}
	published := &r.st.published
	published.Lock()
	defer published.Unlock()
	if err := r.fc.AddFile(path); err != nil {
		return payloadRef{}, err
	}
	published.seq++
	ref := payloadRef{Name: name, Size: len(raw), Seq: published.seq}
	if p.refs == nil {
		p.refs = map[[32]byte]payloadRef{}
	}
	p.refs[sum] = ref
	p.names = append(p.names, name)
	return ref, nil
}

// release stops serving the run's payload files and removes them; each
// executor drops its copies at its next task (dropReleased).
func (p *payloads) release(fc *framework.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, n := range p.names {
		fc.RemoveFile(n)
	}
	if p.dir != "" {
		os.RemoveAll(p.dir)
	}
	p.refs, p.names, p.dir = nil, nil, ""
}

// checkTaskSize fails an action whose tasks would carry more than the
// backend delivers, naming what is large, before any task runs.
func checkTaskSize(fc *framework.Context, b *Builder, w *jobWire, encoded int) error {
	limit, why, ok := fc.MaxTaskInput()
	if !ok || encoded+payloadRoom <= limit {
		return nil
	}
	fp := 0
	for _, s := range w.Fingerprint {
		fp += len(s)
	}
	keys := 0
	for k := range w.Values {
		keys += len(k)
	}
	for k := range w.Parts {
		keys += len(k)
	}
	return fmt.Errorf("dataset: job %q: %w: each task's payload is %d bytes, over the %d bytes it may take of the %d bytes %s (less %d for the task's blocks and ids); "+
		"the graph's fingerprint takes %d bytes (%d nodes), frozen values' keys %d bytes (%d values, %d shipped as files), the job's arguments %d bytes; "+
		"large values and results travel as files already, so build a smaller graph",
		b.job, framework.ErrTaskTooLarge, encoded, limit-payloadRoom, limit, why, payloadRoom, fp, len(w.Fingerprint), keys, len(w.Values)+len(w.Parts), len(w.Parts), len(w.Args))
}

// fetchParts puts the parts of w shipped as files back into w, from this
// executor's copies (each file fetched once per executor by its file
// store, decoded once and shared by its tasks).
func (loaded *loadedStore) fetchParts(ctx context.Context, job string, w *jobWire) error {
	for k, ref := range w.Parts {
		p, err := framework.TaskContextOf(ctx).File(ref.Name)
		if err != nil {
			return fmt.Errorf("dataset: job %q: %s: %w", job, partName(k), err)
		}
		loaded.note(ref.Name, ref.Seq, p)
		v, err := loaded.load(ref.Name, func(path string) (any, error) {
			enc, err := os.ReadFile(path)
			if err != nil {
				return nil, err
			}
			raw, err := decodeChunks(enc)
			if err != nil {
				return nil, err
			}
			if len(raw) != ref.Size {
				return nil, fmt.Errorf("%w: %d bytes decoded, the driver encoded %d", errCorruptBroadcast, len(raw), ref.Size)
			}
			return raw, nil
		})
		if err != nil {
			return fmt.Errorf("dataset: job %q: %s (%s): %w", job, partName(k), ref.Name, err)
		}
		if k == argsPart {
			w.Args = v.([]byte)
			continue
		}
		if w.Values == nil {
			w.Values = map[string][]byte{}
		}
		w.Values[k] = v.([]byte)
	}
	return nil
}
