package dispatcher

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// ZKStore is a Store in ZooKeeper (Spark's spark.deploy.recoveryMode=ZOOKEEPER):
// <root>/drivers/<id> holds each record's JSON and <root>/framework-id the
// framework id. A znode's write is atomic; a record is small (about 600 bytes,
// docs/benchmarks.md), far below ZooKeeper's 1 MB node limit. Uploaded programs
// and the secrets key stay on the dispatcher's disk (--store).
type ZKStore struct {
	conn *zk.Conn
	root string
}

// ParseZK reads a ZooKeeper URL as flint.deploy.zookeeper.url: zk://h1:2181,h2:2181/path
// or h1:2181,h2:2181[/path]; the path defaults to /flint/dispatcher.
func ParseZK(u string) (servers []string, root string, err error) {
	rest := strings.TrimPrefix(u, "zk://")
	hosts, p, _ := strings.Cut(rest, "/")
	for h := range strings.SplitSeq(hosts, ",") {
		if h = strings.TrimSpace(h); h != "" {
			servers = append(servers, h)
		}
	}
	if len(servers) == 0 {
		return nil, "", fmt.Errorf("dispatcher: ZooKeeper URL %q names no server (want zk://host:2181[,host:2181]/path)", u)
	}
	root = "/" + strings.Trim(p, "/")
	if root == "/" {
		root = "/flint/dispatcher"
	}
	return servers, root, nil
}

// NewZKStore connects to servers and creates root and root/drivers when missing.
func NewZKStore(servers []string, root string, sessionTimeout time.Duration) (*ZKStore, error) {
	conn, _, err := zk.Connect(servers, sessionTimeout, zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false))
	if err != nil {
		return nil, fmt.Errorf("dispatcher: ZooKeeper %v: %w", servers, err)
	}
	s := &ZKStore{conn: conn, root: root}
	for _, p := range append(ancestors(root), path.Join(root, "drivers")) {
		if _, err := conn.Create(p, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			conn.Close()
			return nil, fmt.Errorf("dispatcher: ZooKeeper create %s: %w", p, err)
		}
	}
	return s, nil
}

// ancestors lists /a, /a/b, /a/b/c for /a/b/c.
func ancestors(p string) []string {
	var out []string
	cur := ""
	for part := range strings.SplitSeq(strings.Trim(p, "/"), "/") {
		cur += "/" + part
		out = append(out, cur)
	}
	return out
}

// Close ends the ZooKeeper session.
func (s *ZKStore) Close() { s.conn.Close() }

func (s *ZKStore) put(p string, data []byte) error {
	if _, err := s.conn.Set(p, data, -1); err == nil {
		return nil
	} else if !errors.Is(err, zk.ErrNoNode) {
		return err
	}
	_, err := s.conn.Create(p, data, 0, zk.WorldACL(zk.PermAll))
	if errors.Is(err, zk.ErrNodeExists) {
		_, err = s.conn.Set(p, data, -1)
	}
	return err
}

// Save writes r.
func (s *ZKStore) Save(r Record) error {
	if !idRE.MatchString(r.ID) {
		return fmt.Errorf("dispatcher: store: bad id %q", r.ID)
	}
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("dispatcher: store: %w", err)
	}
	if err := s.put(path.Join(s.root, "drivers", r.ID), b); err != nil {
		return fmt.Errorf("dispatcher: ZooKeeper store %s: %w", r.ID, err)
	}
	return nil
}

// LoadAll reads every record, in submission order.
func (s *ZKStore) LoadAll() ([]Record, error) {
	ids, _, err := s.conn.Children(path.Join(s.root, "drivers"))
	if err != nil {
		return nil, fmt.Errorf("dispatcher: ZooKeeper store: %w", err)
	}
	var out []Record
	var errs []error
	for _, id := range ids {
		b, _, err := s.conn.Get(path.Join(s.root, "drivers", id))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", id, err))
			continue
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	if err := errors.Join(errs...); err != nil {
		return out, fmt.Errorf("dispatcher: ZooKeeper store: %w", err)
	}
	return out, nil
}

// SaveFrameworkID records the framework id.
func (s *ZKStore) SaveFrameworkID(id string) error {
	if err := s.put(path.Join(s.root, "framework-id"), []byte(id)); err != nil {
		return fmt.Errorf("dispatcher: ZooKeeper store: %w", err)
	}
	return nil
}

// FrameworkID returns the recorded framework id, or "".
func (s *ZKStore) FrameworkID() (string, error) {
	b, _, err := s.conn.Get(path.Join(s.root, "framework-id"))
	if errors.Is(err, zk.ErrNoNode) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("dispatcher: ZooKeeper store: %w", err)
	}
	return string(b), nil
}
