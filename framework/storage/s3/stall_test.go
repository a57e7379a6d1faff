package s3_test

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/storage"
	s3fs "github.com/flint-mesos/flint/framework/storage/s3"
	"github.com/flint-mesos/flint/internal/testkit/s3server"
)

// stallProxy forwards loopback TCP connections to a server until Stall; from then on it
// forwards nothing more in either direction (connections stay open, as a hung server's do)
// and counts the connections that carry a request while stalled.
type stallProxy struct {
	l       net.Listener
	target  string
	stalled chan struct{} // closed by Stall
	stop    chan struct{} // closed at the end: every copier returns
	once    sync.Once
	wg      sync.WaitGroup

	mu        sync.Mutex
	requested map[net.Conn]bool // connections a request reached while stalled
	open      map[net.Conn]bool // client connections being forwarded
	accepted  int
	cutAt     int  // CutOnce: the response bytes after which one connection is dropped
	cut       bool // CutOnce's drop has happened
}

// CutOnce makes the proxy drop the first connection whose response passes n bytes,
// wherever the client's reading is: a server dropping a connection mid-body.
func (p *stallProxy) CutOnce(n int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.cutAt = n
}

// cutHere is how many of the next n response bytes a connection that has forwarded sent
// bytes may still forward, and whether it is the one CutOnce drops after them.
func (p *stallProxy) cutHere(sent, n int) (int, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cutAt == 0 || p.cut || sent+n < p.cutAt {
		return n, false
	}
	p.cut = true
	return p.cutAt - sent, true
}

func newStallProxy(t *testing.T, target string) *stallProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{l: l, target: target, stalled: make(chan struct{}), stop: make(chan struct{}), requested: map[net.Conn]bool{}, open: map[net.Conn]bool{}}
	p.wg.Go(p.accept)
	t.Cleanup(func() { close(p.stop); l.Close(); p.wg.Wait() })
	return p
}

func (p *stallProxy) Addr() string { return p.l.Addr().String() }

// Stall stops all forwarding.
func (p *stallProxy) Stall() { p.once.Do(func() { close(p.stalled) }) }

// Requests is how many connections carried a request after Stall.
func (p *stallProxy) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.requested)
}

func (p *stallProxy) accept() {
	for {
		c, err := p.l.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.open[c] = true
		p.accepted++
		p.mu.Unlock()
		p.wg.Go(func() {
			defer func() { p.mu.Lock(); delete(p.open, c); p.mu.Unlock() }()
			defer c.Close()
			s, err := net.Dial("tcp", p.target)
			if err != nil {
				return
			}
			defer s.Close()
			done := make(chan struct{}, 2)
			go func() { p.copy(s, c, c); done <- struct{}{} }()
			go func() { p.copy(c, s, nil); done <- struct{}{} }()
			select {
			case <-done: // one side closed: end both
			case <-p.stop:
			}
			c.Close()
			s.Close()
			<-done
		})
	}
}

// copy forwards src to dst chunk by chunk; once stalled it holds what it read (counting a
// request from client, when given) and forwards nothing until the test ends.
func (p *stallProxy) copy(dst, src, client net.Conn) {
	buf := make([]byte, 32<<10)
	sent := 0
	for {
		n, err := src.Read(buf)
		if n > 0 {
			select {
			case <-p.stalled:
				if client != nil {
					p.mu.Lock()
					p.requested[client] = true
					p.mu.Unlock()
				}
				// hold the data: keep reading (and dropping) until the connection ends
				continue
			default:
			}
			m, drop := n, false
			if client == nil { // a response: CutOnce may drop it here
				m, drop = p.cutHere(sent, n)
			}
			if _, werr := dst.Write(buf[:m]); werr != nil || drop {
				return // the caller closes both sides
			}
			sent += m
		}
		if err != nil {
			return
		}
	}
}

// A server that stalls after serving for a while — a real stall, a loopback proxy that stops
// forwarding: a read already under way (its body half received) waits flint.s3.requestTimeout
// for data, resumes from where it stopped with back-off, flint.s3.maxAttempts times in a row,
// then fails with one error naming the object and the offset; a new request is tried
// maxAttempts times (one connection each, timeouts), then fails with one error naming the path.
func TestServerStallsMidReadTimesOutRetriesThenFails(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	direct := newFS(t, srv, nil)
	data := randomBytes(t, 8<<20)
	put(t, direct, "s3://data/big", data)
	proxy := newStallProxy(t, srv.Addr)
	const attempts, timeout = 3, 300 * time.Millisecond
	fs, err := s3fs.New(context.Background(), s3fs.Options{Endpoint: "http://" + proxy.Addr(), Region: s3server.Region, PathStyle: true,
		AccessKey: s3server.AccessKey, SecretKey: s3server.SecretKey, RequestTimeout: timeout, MaxAttempts: attempts, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.CloseIdleConnections()
	ctx := context.Background()
	files, err := fs.List(ctx, "s3://data/")
	if err != nil || len(files) != 1 {
		t.Fatalf("list through the proxy: %v %v", files, err)
	}
	rc, err := fs.Open(ctx, files[0], 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	head := make([]byte, 1<<20)
	if _, err := io.ReadFull(rc, head); err != nil || !bytes.Equal(head, data[:1<<20]) {
		t.Fatalf("first MiB before the stall: %v", err)
	}
	proxy.Stall()
	rest, err := io.ReadAll(rc)
	if err == nil || !strings.Contains(err.Error(), "s3 read s3://data/big stopped at byte") || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("read after the stall: %v (%d more bytes), want one timeout error naming the object and the offset", err, len(rest))
	}
	// the stalled body, then maxAttempts-1 GETs resuming it, each on a connection of its own
	if n := proxy.Requests(); n != attempts-1 {
		t.Fatalf("%d GETs resumed the stalled read, want %d (flint.s3.maxAttempts in all)", n, attempts-1)
	}
	if got := append(head, rest...); !bytes.Equal(got, data[:len(got)]) {
		t.Fatal("the bytes read before the error are not the object's")
	}
	before := proxy.Requests()
	_, err = fs.Stat(ctx, "s3://data/big")
	if err == nil || !strings.Contains(err.Error(), "s3://data/big") || !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("stat on the stalled server: %v, want one timeout error naming the path", err)
	}
	if n := proxy.Requests() - before; n != attempts {
		t.Fatalf("%d connections carried the stat while stalled, want %d (flint.s3.maxAttempts)", n, attempts)
	}
	var _ storage.FS = fs
}

// A connection dropped mid-body is resumed from where the read stopped: the whole object
// arrives, byte for byte, with no error.
func TestDroppedConnectionMidReadResumes(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	direct := newFS(t, srv, nil)
	data := randomBytes(t, 8<<20)
	put(t, direct, "s3://data/big", data)
	proxy := newStallProxy(t, srv.Addr)
	fs, err := s3fs.New(context.Background(), s3fs.Options{Endpoint: "http://" + proxy.Addr(), Region: s3server.Region, PathStyle: true,
		AccessKey: s3server.AccessKey, SecretKey: s3server.SecretKey, RequestTimeout: 5 * time.Second, MaxAttempts: 3, MaxBackoff: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer fs.CloseIdleConnections()
	ctx := context.Background()
	fi, err := fs.Stat(ctx, "s3://data/big")
	if err != nil {
		t.Fatal(err)
	}
	// the GET's connection is dropped 2 MiB into its response: after the 1 MiB read below,
	// before the rest (dropping it at a moment chosen by the test raced the proxy, which
	// may already have forwarded the whole body into the sockets' buffers)
	proxy.CutOnce(2 << 20)
	rc, err := fs.Open(ctx, fi, 100, 7<<20)
	if err != nil {
		t.Fatal(err)
	}
	defer rc.Close()
	head := make([]byte, 1<<20)
	if _, err := io.ReadFull(rc, head); err != nil {
		t.Fatal(err)
	}
	proxy.mu.Lock()
	before := proxy.accepted
	proxy.mu.Unlock()
	rest, err := io.ReadAll(rc)
	proxy.mu.Lock()
	after := proxy.accepted
	proxy.mu.Unlock()
	if after == before {
		t.Fatal("the read did not reconnect after its connection dropped")
	}
	if err != nil {
		t.Fatalf("read after the connection dropped: %v", err)
	}
	if got := append(head, rest...); !bytes.Equal(got, data[100:100+7<<20]) {
		t.Fatalf("read %d bytes, not bytes [100, 100+7MiB) of the object", len(got))
	}
}
