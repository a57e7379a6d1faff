package shufflefetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"time"

	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
)

// Config is how one reduce task fetches.
type Config struct {
	Client *shuffleserver.Client // nil: every block must be on this host
	Host   string                // this executor's host; blocks on it are read from disk
	// MaxBytesInFlight and MaxReqsInFlight bound outstanding fetches
	// (flint.reducer.maxSizeInFlight, flint.reducer.maxReqsInFlight).
	MaxBytesInFlight int64
	MaxReqsInFlight  int
	// MaxRetries and RetryWait: flint.shuffle.io.maxRetries, .retryWait.
	MaxRetries int
	RetryWait  time.Duration
	Memory     *shuffle.Grant // fetched blocks kept in memory
	SpillDir   string         // fetched blocks beyond Memory, merge passes
	// FanIn is the most blocks merged at once (0: 64).
	FanIn       int
	Compression shuffleblock.Compression // of merge passes
	Rand        *rand.Rand               // fetch order (nil: a fixed seed)
	// After waits between retries (nil: time.After); Now times the fetch
	// wait (nil: time.Now). Tests inject both.
	After func(time.Duration) <-chan time.Time
	Now   func() time.Time
}

// Request is one reduce partition's blocks.
type Request struct {
	ShuffleID int
	Groups    []mapoutput.FetchGroup
}

// ReadMetrics are a reduce task's shuffle read figures.
type ReadMetrics struct {
	LocalBlocks, RemoteBlocks int64
	LocalBytes, RemoteBytes   int64
	RemoteBytesToDisk         int64         // fetched bytes that went to the spill file
	Retries                   int64         // fetch attempts beyond the first
	FetchWait                 time.Duration // time the task waited for blocks
	MergePasses               int64         // intermediate merge runs written
	MergeBytes                int64
}

// Fetched is a reduce partition's blocks, ready to merge. Close it.
type Fetched struct {
	blocks  []fetchedBlock
	spill   *os.File
	spilled int64
	grant   *shuffle.Grant
	held    int64 // of grant, for fetched blocks
	Metrics ReadMetrics
}

type fetchedBlock struct {
	id    blockID
	mem   []byte
	disk  *io.SectionReader
	local *shuffle.Block
}

type blockID struct {
	shuffle int
	loc     mapoutput.Location
	block   mapoutput.Block
}

func (id blockID) failure(msg string) *mapoutput.FetchFailure {
	return &mapoutput.FetchFailure{ShuffleID: id.shuffle, MapIndex: id.block.MapIndex, ReduceIndex: id.block.ReduceIndex,
		ExecutorID: id.loc.ExecutorID, Host: id.loc.Host, Address: id.loc.Address, Message: msg}
}

type remote struct {
	id   blockID
	addr shuffleserver.Address
}

// Fetch reads every block of req. Its error is a *mapoutput.FetchFailure
// when a block could not be read, or the context's error.
func Fetch(ctx context.Context, cfg Config, req Request) (*Fetched, error) {
	cfg = withDefaults(cfg)
	f := &Fetched{grant: cfg.Memory}
	start := cfg.Now()
	remotes, err := f.readLocal(cfg, req)
	if err == nil {
		cfg.Rand.Shuffle(len(remotes), func(i, j int) { remotes[i], remotes[j] = remotes[j], remotes[i] })
		err = f.fetchRemote(ctx, cfg, remotes)
	}
	f.Metrics.FetchWait = cfg.Now().Sub(start)
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func withDefaults(cfg Config) Config {
	if cfg.MaxBytesInFlight <= 0 {
		cfg.MaxBytesInFlight = 48 << 20
	}
	if cfg.MaxReqsInFlight <= 0 {
		cfg.MaxReqsInFlight = 64
	}
	if cfg.FanIn <= 0 {
		cfg.FanIn = 64
	}
	if cfg.Rand == nil {
		cfg.Rand = rand.New(rand.NewPCG(1, 2))
	}
	if cfg.After == nil {
		cfg.After = time.After
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.SpillDir == "" {
		cfg.SpillDir = os.TempDir()
	}
	return cfg
}

// readLocal opens the blocks on this host and returns the others.
func (f *Fetched) readLocal(cfg Config, req Request) ([]remote, error) {
	var remotes []remote
	for _, g := range req.Groups {
		addr, err := shuffleserver.ParseAddress(g.Location.Address)
		for _, b := range g.Blocks {
			id := blockID{shuffle: req.ShuffleID, loc: g.Location, block: b}
			if err != nil {
				return nil, id.failure(err.Error())
			}
			onHost := addr.Dir != "" && (g.Location.Host == cfg.Host || cfg.Client == nil)
			if onHost {
				idx, data := shuffle.OutputPaths(addr.Dir, req.ShuffleID, b.MapIndex)
				blk, err := shuffle.OpenBlockAt(idx, data, b.ReduceIndex)
				switch {
				case err == nil:
					f.blocks = append(f.blocks, fetchedBlock{id: id, local: blk})
					f.Metrics.LocalBlocks++
					f.Metrics.LocalBytes += blk.Length
					continue
				case errors.Is(err, shuffle.ErrNoOutput) || errors.Is(err, shuffleblock.ErrCorrupt) || cfg.Client == nil:
					return nil, id.failure(err.Error())
				}
				// Not readable here (permissions): ask its server.
			}
			if cfg.Client == nil {
				return nil, id.failure("shufflefetch: block is on another host and this reader has no client")
			}
			remotes = append(remotes, remote{id: id, addr: addr})
		}
	}
	return remotes, nil
}

type result struct {
	r       remote
	data    []byte
	retries int64
	err     error
}

// fetchRemote fetches under the in-flight limits.
func (f *Fetched) fetchRemote(ctx context.Context, cfg Config, remotes []remote) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan result)
	var inBytes int64
	inReqs, next := 0, 0
	var failure error
	for next < len(remotes) || inReqs > 0 {
		for failure == nil && next < len(remotes) && inReqs < cfg.MaxReqsInFlight &&
			(inReqs == 0 || inBytes+int64(remotes[next].id.block.Size) <= cfg.MaxBytesInFlight) {
			r := remotes[next]
			next++
			inReqs++
			inBytes += int64(r.id.block.Size)
			go func() { results <- fetchOne(ctx, cfg, r) }()
		}
		if failure != nil && inReqs == 0 {
			break
		}
		res := <-results
		inReqs--
		inBytes -= int64(res.r.id.block.Size)
		f.Metrics.Retries += res.retries
		if res.err != nil {
			if failure == nil {
				failure = res.err
				cancel()
			}
			continue
		}
		if failure == nil {
			if err := f.keep(cfg, res.r.id, res.data); err != nil {
				failure = err
				cancel()
			}
		}
	}
	return failure
}

// fetchOne fetches one block with retries; a corrupt block is fetched
// once more, then reported.
func fetchOne(ctx context.Context, cfg Config, r remote) result {
	res := result{r: r}
	corrupt := false
	for attempt := 0; ; attempt++ {
		if attempt > 0 {
			res.retries++
		}
		data, err := cfg.Client.Fetch(ctx, r.addr, r.id.shuffle, r.id.block.MapIndex, r.id.block.ReduceIndex, nil)
		if err == nil {
			if err = shuffleblock.Verify(data); err == nil {
				res.data = data
				return res
			}
			if !corrupt {
				corrupt = true
				continue
			}
			res.err = r.id.failure(fmt.Sprintf("shufflefetch: block corrupt twice: %v", err))
			return res
		}
		if ctx.Err() != nil {
			res.err = ctx.Err()
			return res
		}
		var se *shuffleserver.StatusError
		if (errors.As(err, &se) && !se.Retryable()) || attempt >= cfg.MaxRetries {
			res.err = r.id.failure(fmt.Sprintf("shufflefetch: after %d attempts: %v", attempt+1, err))
			return res
		}
		select {
		case <-cfg.After(cfg.RetryWait):
		case <-ctx.Done():
			res.err = ctx.Err()
			return res
		}
	}
}

// keep holds a fetched block in memory if the grant allows, else appends
// it to the spill file.
func (f *Fetched) keep(cfg Config, id blockID, data []byte) error {
	f.Metrics.RemoteBlocks++
	f.Metrics.RemoteBytes += int64(len(data))
	if cfg.Memory == nil || cfg.Memory.Grow(int64(len(data))) {
		f.held += int64(len(data))
		f.blocks = append(f.blocks, fetchedBlock{id: id, mem: data})
		return nil
	}
	if f.spill == nil {
		sp, err := os.CreateTemp(cfg.SpillDir, ".fetched-*")
		if err != nil {
			return fmt.Errorf("shufflefetch: spill to %s: %w", cfg.SpillDir, err)
		}
		f.spill = sp
	}
	if _, err := f.spill.Write(data); err != nil {
		return fmt.Errorf("shufflefetch: spill to %s: %w", cfg.SpillDir, err)
	}
	f.blocks = append(f.blocks, fetchedBlock{id: id, disk: io.NewSectionReader(f.spill, f.spilled, int64(len(data)))})
	f.spilled += int64(len(data))
	f.Metrics.RemoteBytesToDisk += int64(len(data))
	return nil
}

// Streams are the blocks as sorted streams. A block that turns out
// corrupt while it is read (a local file changed under the reader) fails
// its stream with a *mapoutput.FetchFailure.
func (f *Fetched) Streams() []shuffle.Stream {
	out := make([]shuffle.Stream, len(f.blocks))
	for i, b := range f.blocks {
		var r io.Reader
		switch {
		case b.mem != nil:
			r = bytes.NewReader(b.mem)
		case b.disk != nil:
			r = b.disk
		default:
			r = b.local
		}
		out[i] = &taggedStream{r: shuffleblock.NewReader(r), id: b.id}
	}
	return out
}

type taggedStream struct {
	r  *shuffleblock.Reader
	id blockID
}

func (s *taggedStream) Next() ([]byte, []byte, error) {
	k, v, err := s.r.Next()
	if err != nil && err != io.EOF {
		return nil, nil, s.id.failure(err.Error())
	}
	return k, v, err
}

// Close releases the blocks: memory, local files and the spill file.
func (f *Fetched) Close() {
	for _, b := range f.blocks {
		if b.local != nil {
			b.local.Close()
		}
	}
	f.blocks = nil
	if f.spill != nil {
		f.spill.Close()
		os.Remove(f.spill.Name())
		f.spill = nil
	}
	if f.grant != nil {
		f.grant.Shrink(f.held)
		f.held = 0
	}
}
