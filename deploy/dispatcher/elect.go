package dispatcher

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"path"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// ErrLostLeadership is the end of a leading dispatcher whose ZooKeeper session
// ended or was cut: another dispatcher may lead by now, so this one stops
// (Spark's dispatcher and standalone master exit on revoked leadership too; a
// supervisor starts it again, as a standby).
var ErrLostLeadership = errors.New("dispatcher: lost leadership in ZooKeeper")

// Elector takes part in the dispatchers' leader election in ZooKeeper (Spark's
// ZooKeeperLeaderElectionAgent): each dispatcher holds an ephemeral sequential
// znode <root>/leader/member_<seq> holding its address; the lowest sequence
// leads, each standby watches the member just before its own. Its ZooKeeper
// session is its own (the store's is another), so leadership ends exactly when
// this session does.
type Elector struct {
	conn   *zk.Conn
	dir    string
	node   string // our member's path, once created
	addr   string
	events <-chan zk.Event
}

// NewElector connects to servers for the election under root; addr is what
// standbys tell clients about the leader (its REST URL).
func NewElector(servers []string, root string, sessionTimeout time.Duration, addr string) (*Elector, error) {
	conn, events, err := zk.Connect(servers, sessionTimeout, zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("dispatcher: ZooKeeper %v: %w", servers, err)
	}
	e := &Elector{conn: conn, dir: path.Join(root, "leader"), addr: addr, events: events}
	go func() {
		for range events { // the client drops events nobody reads; read them until Close
		}
	}()
	for _, p := range append(ancestors(root), e.dir) {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			conn.Close()
			return nil, fmt.Errorf("dispatcher: ZooKeeper create %s: %w", p, err)
		}
	}
	return e, nil
}

// Close ends the session: the member znode goes with it, and the next standby
// leads.
func (e *Elector) Close() { e.conn.Close() }

type member struct {
	Address string `json:"address"`
}

// Lead enters the election (once) and blocks until this dispatcher leads or ctx
// ends. The returned channel is closed when leadership is lost: the member znode
// deleted, the session expired or the connection to ZooKeeper cut (treated as
// lost, as Curator's leader latch does, since another dispatcher may take over
// before this one hears of it).
func (e *Elector) Lead(ctx context.Context) (<-chan struct{}, error) {
	if e.node == "" {
		data, _ := json.Marshal(member{Address: e.addr})
		node, err := e.conn.CreateProtectedEphemeralSequential(path.Join(e.dir, "member_"), data, zk.WorldACL(zk.PermAll))
		if err != nil {
			return nil, fmt.Errorf("dispatcher: ZooKeeper election: %w", err)
		}
		e.node = node
	}
	for {
		members, err := e.members()
		if err != nil {
			return nil, err
		}
		i := slices.Index(members, path.Base(e.node))
		if i < 0 {
			return nil, fmt.Errorf("%w: our member %s is gone", ErrLostLeadership, e.node)
		}
		if i == 0 {
			return e.watchOwn()
		}
		ok, _, ch, err := e.conn.ExistsW(path.Join(e.dir, members[i-1]))
		if err != nil {
			return nil, fmt.Errorf("dispatcher: ZooKeeper election: %w", err)
		}
		if !ok {
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// watchOwn returns a channel closed on the first event of our member's znode.
func (e *Elector) watchOwn() (<-chan struct{}, error) {
	ok, _, ch, err := e.conn.ExistsW(e.node)
	if err != nil {
		return nil, fmt.Errorf("dispatcher: ZooKeeper election: %w", err)
	}
	lost := make(chan struct{})
	if !ok {
		close(lost)
		return lost, nil
	}
	go func() {
		<-ch
		close(lost)
	}()
	return lost, nil
}

// members lists the election's members ordered by sequence (the protected
// prefix CreateProtectedEphemeralSequential adds differs per member, so the
// names are ordered by their sequence suffix).
func (e *Elector) members() ([]string, error) {
	kids, _, err := e.conn.Children(e.dir)
	if err != nil {
		return nil, fmt.Errorf("dispatcher: ZooKeeper election: %w", err)
	}
	seq := func(n string) string { return n[strings.LastIndex(n, "member_")+len("member_"):] }
	sort.Slice(kids, func(i, j int) bool { return seq(kids[i]) < seq(kids[j]) })
	return kids, nil
}

// Leader is the leading dispatcher's address ("" when none leads).
func (e *Elector) Leader() (string, error) {
	members, err := e.members()
	if err != nil || len(members) == 0 {
		return "", err
	}
	b, _, err := e.conn.Get(path.Join(e.dir, members[0]))
	if err != nil {
		return "", fmt.Errorf("dispatcher: ZooKeeper election: %w", err)
	}
	var m member
	if err := json.Unmarshal(b, &m); err != nil {
		return "", fmt.Errorf("dispatcher: ZooKeeper election: %w", err)
	}
	return m.Address, nil
}
