package gateway

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/flint-mesos/flint/proto/flintpb"
)

// maxPrealloc caps the buffer allocated up front for a fetched block, so a
// bogus total_size from the network cannot reserve memory it never sends.
const maxPrealloc = 16 << 20

// Launch sends td to the executor. It does not block on the network; td
// must not be modified afterwards. ErrUnknownExecutor or ErrExecutorLost
// when the executor is not (or no longer) connected.
func (g *Gateway) Launch(executorID string, td *flintpb.TaskDescription) error {
	if td == nil {
		return errors.New("gateway: Launch of a nil TaskDescription")
	}
	return g.sendTo(executorID, &flintpb.DriverMessage{Message: &flintpb.DriverMessage_LaunchTask{LaunchTask: td}})
}

// LaunchTasks sends tds to the executor in order, as few messages as it
// understands (one LaunchTasks when it batches). It does not block on the
// network; neither tds nor its elements may be modified afterwards.
// ErrUnknownExecutor or ErrExecutorLost when the executor is not (or no
// longer) connected: then none of tds was sent.
func (g *Gateway) LaunchTasks(executorID string, tds []*flintpb.TaskDescription) error {
	if slices.Contains(tds, nil) {
		return errors.New("gateway: LaunchTasks with a nil TaskDescription")
	}
	switch len(tds) {
	case 0:
		_, err := g.lookup(executorID)
		return err
	case 1:
		return g.Launch(executorID, tds[0])
	}
	return g.sendTo(executorID, &flintpb.DriverMessage{Message: &flintpb.DriverMessage_LaunchTasks{LaunchTasks: &flintpb.LaunchTasks{Tasks: tds}}})
}

// Kill asks the executor to kill task taskID (interrupting its context);
// the task's TASK_KILLED update follows as a status update.
func (g *Gateway) Kill(executorID string, taskID uint64, reason string) error {
	k := &flintpb.KillTask{TaskId: taskID, Reason: reason, Interrupt: true}
	return g.sendTo(executorID, &flintpb.DriverMessage{Message: &flintpb.DriverMessage_KillTask{KillTask: k}})
}

// ReleaseResult tells the executor it may drop blockID. It is best effort:
// an executor that is gone has dropped it anyway.
func (g *Gateway) ReleaseResult(executorID, blockID string) {
	r := &flintpb.ReleaseResult{BlockId: blockID}
	_ = g.sendTo(executorID, &flintpb.DriverMessage{Message: &flintpb.DriverMessage_ReleaseResult{ReleaseResult: r}})
}

// ReleaseShuffle tells the executor to delete released map outputs (see
// backend.ShuffleRelease). Best effort, like ReleaseResult.
func (g *Gateway) ReleaseShuffle(executorID, namespace string, shuffleID int, all bool) {
	r := &flintpb.ReleaseShuffle{Namespace: namespace, ShuffleId: int64(shuffleID), All: all}
	_ = g.sendTo(executorID, &flintpb.DriverMessage{Message: &flintpb.DriverMessage_ReleaseShuffle{ReleaseShuffle: r}})
}

// StopExecutor asks the executor to shut down: it kills its tasks, closes
// its stream and exits; ExecutorLost then reports it with reason.
func (g *Gateway) StopExecutor(executorID, reason string) error {
	c, err := g.lookup(executorID)
	if err != nil {
		return err
	}
	stopping := reason
	if stopping == "" {
		stopping = "stopped by the driver"
	}
	c.stopping.CompareAndSwap(nil, &stopping) // the first reason stays
	return c.send(&flintpb.DriverMessage{Message: &flintpb.DriverMessage_StopExecutor{StopExecutor: &flintpb.StopExecutor{Reason: reason}}})
}

func (g *Gateway) sendTo(executorID string, m *flintpb.DriverMessage) error {
	c, err := g.lookup(executorID)
	if err != nil {
		return err
	}
	return c.send(m)
}

// FetchResult fetches the indirect result blockID from the executor. The
// executor streams it in chunks on the executor's stream (between its other
// messages), so results are not bounded by the gRPC message size; they are
// bounded by Config.MaxResultSize. It fails with ErrFetch when the
// executor does not have the block, ErrExecutorLost when the executor goes
// away first, ErrClosed, or ctx's error.
func (g *Gateway) FetchResult(ctx context.Context, executorID, blockID string) ([]byte, error) {
	c, err := g.lookup(executorID)
	if err != nil {
		return nil, err
	}
	id := g.nextReq.Add(1)
	f := &fetch{blockID: blockID, max: g.cfg.MaxResultSize, done: make(chan struct{})}
	// Added before the request is queued: the stream's end (finish) closes
	// the mailbox before it fails the fetches it finds.
	c.fetches.Store(id, f)
	if err := c.send(&flintpb.DriverMessage{Message: &flintpb.DriverMessage_FetchResult{
		FetchResult: &flintpb.FetchResult{BlockId: blockID, RequestId: id}}}); err != nil {
		c.fetches.Delete(id)
		return nil, err
	}
	select {
	case <-f.done:
		return f.data, f.err
	case <-ctx.Done():
		c.dropFetch(id)
		return nil, fmt.Errorf("gateway: fetch %s from executor %s: %w", blockID, executorID, context.Cause(ctx))
	case <-g.closing:
		c.dropFetch(id)
		return nil, ErrClosed
	}
}

func (c *conn) dropFetch(id uint64) { c.fetches.Delete(id) }

// fetch is one FetchResult awaiting its chunks.
type fetch struct {
	blockID string
	max     int64
	total   int64
	started bool
	buf     []byte

	once sync.Once
	data []byte
	err  error
	done chan struct{}
}

func (f *fetch) finish(data []byte, err error) {
	f.once.Do(func() {
		f.data, f.err = data, err
		close(f.done)
	})
}

// onBlock appends a chunk to its fetch. A chunk that breaks the rules
// fails that fetch only; chunks of unknown requests (abandoned fetches) are
// dropped.
func (c *conn) onBlock(rb *flintpb.ResultBlock) {
	if rb == nil {
		return
	}
	v, ok := c.fetches.Load(rb.RequestId)
	if !ok {
		return
	}
	f := v.(*fetch) // its chunks are readLoop's alone
	if err := f.add(rb); err != nil {
		c.fetches.Delete(rb.RequestId)
		f.finish(nil, fmt.Errorf("%w: %s from executor %s: %w", ErrFetch, f.blockID, c.id, err))
		return
	}
	if rb.Last {
		c.fetches.Delete(rb.RequestId)
		f.finish(f.buf, nil)
	}
}

func (f *fetch) add(rb *flintpb.ResultBlock) error {
	switch {
	case rb.Error != "":
		return errors.New(rb.Error)
	case rb.BlockId != f.blockID:
		return fmt.Errorf("answer names block %q", rb.BlockId)
	case rb.TotalSize < 0:
		return fmt.Errorf("negative size %d", rb.TotalSize)
	case f.max > 0 && rb.TotalSize > f.max:
		return fmt.Errorf("result of %d bytes exceeds flint.driver.maxResultSize (%d)", rb.TotalSize, f.max)
	case f.started && rb.TotalSize != f.total:
		return fmt.Errorf("size changed from %d to %d", f.total, rb.TotalSize)
	case rb.Offset != int64(len(f.buf)):
		return fmt.Errorf("chunk at offset %d, expected %d", rb.Offset, len(f.buf))
	case int64(len(f.buf))+int64(len(rb.Data)) > rb.TotalSize:
		return fmt.Errorf("more than the announced %d bytes", rb.TotalSize)
	case rb.Last && int64(len(f.buf))+int64(len(rb.Data)) != rb.TotalSize:
		return fmt.Errorf("ended after %d of %d bytes", int64(len(f.buf))+int64(len(rb.Data)), rb.TotalSize)
	}
	if !f.started {
		f.started, f.total = true, rb.TotalSize
		f.buf = make([]byte, 0, min(rb.TotalSize, maxPrealloc))
	}
	f.buf = append(f.buf, rb.Data...)
	return nil
}
