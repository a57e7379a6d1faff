package fine

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/tlspin"
)

// FetchResult implements backend.Backend: the block is fetched from the
// result server of the executor that kept it (its URL came with the
// task's terminal update).
func (b *Backend) FetchResult(ctx context.Context, executorID, blockID string) ([]byte, error) {
	var ref resultRef
	var ok bool
	if !b.call(func() { ref, ok = b.blocks[blockID] }) {
		return nil, fmt.Errorf("fine: fetch result %s from executor %s: %w", blockID, executorID, ErrNotStarted)
	}
	if !ok || ref.url == "" {
		return nil, fmt.Errorf("fine: no result server known for block %s of executor %s", blockID, executorID)
	}
	httpc, err := b.resultClient(ref.pin)
	if err != nil {
		return nil, fmt.Errorf("fine: fetch result %s from executor %s: %w", blockID, executorID, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ref.url+contract.ResultPath+blockID, nil)
	if err != nil {
		return nil, fmt.Errorf("fine: fetch result %s: %w", blockID, err)
	}
	req.Header.Set("Authorization", "Bearer "+resultSecret(b.secret, executorID))
	resp, err := httpc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fine: fetch result %s from executor %s: %w", blockID, executorID, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return nil, fmt.Errorf("fine: fetch result %s from executor %s: %s: %s", blockID, executorID, resp.Status, msg)
	}
	limit := b.set.MaxResultSize
	if limit <= 0 {
		limit = 1 << 62
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, fmt.Errorf("fine: fetch result %s from executor %s: %w", blockID, executorID, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("fine: result %s exceeds flint.driver.maxResultSize (%d bytes)", blockID, limit)
	}
	return data, nil
}

// releaseShuffles sends the releases as framework messages to the Flint
// executor of every agent that started one (shuffleenv's release
// messages): it deletes the outputs and, holding none, may exit on idle;
// and to the agents' shuffle services, which hold the files of executors
// that are gone. Best effort: an executor that is gone without a service
// took its files with it.
func (b *Backend) releaseShuffles(rs []backend.ShuffleRelease) {
	if b.svcs != nil {
		b.svcs.Release(rs)
	}
	type target struct{ agentID, executorID string }
	var ts []target
	for agentID, ae := range b.agents {
		if ae.started {
			ts = append(ts, target{agentID, ae.id})
		}
	}
	// in agent order, not the map's: the connection sees the same calls
	// in the same order for the same inputs (a simulation replays a seed)
	slices.SortFunc(ts, func(x, y target) int { return strings.Compare(x.agentID, y.agentID) })
	conn := b.conn
	if conn == nil {
		return
	}
	for _, t := range ts {
		for _, r := range rs {
			msg := contract.ShuffleReleaseMessage(r.Namespace, r.ShuffleID, r.All)
			if err := conn.Message(mesos.AgentID{Value: t.agentID}, mesos.ExecutorID{Value: t.executorID}, msg); err != nil {
				b.log.WithField("executor", t.executorID).Debugf("fine: release shuffle outputs: %v", err)
			}
		}
	}
}

// releaseResult tells the executor to drop a kept result, in the
// background.
func (b *Backend) releaseResult(executorID, blockID string) {
	ref, ok := b.blocks[blockID]
	delete(b.blocks, blockID)
	if !ok || ref.url == "" {
		return
	}
	httpc, err := b.resultClient(ref.pin)
	if err != nil {
		b.log.Debugf("fine: release result %s on executor %s: %v", blockID, executorID, err)
		return
	}
	b.releases.Add(1)
	go func() {
		defer b.releases.Done()
		req, err := http.NewRequest(http.MethodDelete, ref.url+contract.ResultPath+blockID, nil)
		if err != nil {
			return
		}
		req.Header.Set("Authorization", "Bearer "+resultSecret(b.secret, executorID))
		resp, err := httpc.Do(req)
		if err != nil {
			b.log.Debugf("fine: release result %s on executor %s: %v", blockID, executorID, err)
			return
		}
		resp.Body.Close()
	}()
}

// resultSecret is the secret executor executorID's result server requires:
// HMAC-SHA256 of its id under the application secret, so that the
// application secret never travels in an ExecutorInfo (which Mesos keeps
// and shows) and one executor's secret opens no other executor's results.
func resultSecret(secret, executorID string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("flint fine result server v1\x00"))
	m.Write([]byte(executorID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// resultRef is where a kept result is: its executor's result server and,
// when that serves TLS, the SHA-256 of its certificate.
type resultRef struct{ url, pin string }

// resultClient is the HTTP client for result servers with certificate pin
// (plaintext when pin is empty): one per pin, so connections are reused.
func (b *Backend) resultClient(pin string) (*http.Client, error) {
	if pin == "" {
		return b.httpc, nil
	}
	if c, ok := b.tlsClients.Load(pin); ok {
		return c.(*http.Client), nil
	}
	cfg, err := tlspin.Client(pin)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Timeout: b.httpc.Timeout, Transport: &http.Transport{TLSClientConfig: cfg, MaxIdleConnsPerHost: 16,
		IdleConnTimeout: 30 * time.Second, ForceAttemptHTTP2: false}}
	if prev, loaded := b.tlsClients.LoadOrStore(pin, c); loaded {
		return prev.(*http.Client), nil // another fetch made one first
	}
	return c, nil
}
