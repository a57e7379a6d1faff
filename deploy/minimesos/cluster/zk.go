package cluster

import (
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-zookeeper/zk"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"
)

// ZooKeeper makes the master take part in Mesos' leader election in
// ZooKeeper, as a Mesos master started with --zk=zk://servers/path does:
// it writes its MasterInfo as JSON into an ephemeral sequential
// json.info_ znode under Path and leads once its znode is the lowest.
// Until then it serves no framework or agent: scheduler calls (and every
// other endpoint) are answered 307 towards the master ZooKeeper names,
// 503 while none leads, and agents' registrations are refused.
type ZooKeeper struct {
	Servers []string
	Path    string // e.g. /mesos
	// SessionTimeout is the ZooKeeper session timeout (Mesos'
	// --zk_session_timeout, 10s): after RestartMaster, the old master's
	// znode lasts that long, as a crashed master's does until its session
	// expires, and the new master answers 307 towards it meanwhile.
	SessionTimeout time.Duration
}

// znodePrefix names Mesos' JSON leader-election znodes.
const znodePrefix = "json.info_"

// errNotLeading refuses agents while another master leads.
var errNotLeading = errors.New("cluster: this master is not the elected leader (ZooKeeper names another)")

// contender is one master's candidacy.
type contender struct {
	conn      *zk.Conn
	node      string // the znode's full path
	log       logrus.FieldLogger
	onElected func() // called once, when the master begins to lead
	stop      chan struct{}
	done      chan struct{}

	mu      sync.Mutex
	leading bool
	leader  string // host:port of the leading master, "" when none
}

// contend connects to ZooKeeper, writes info into a new json.info_ znode
// and watches the election in the background.
func contend(cfg ZooKeeper, info mesos.MasterInfo, onElected func(), log logrus.FieldLogger) (*contender, error) {
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	path := "/" + strings.Trim(cfg.Path, "/")
	conn, events, err := zk.Connect(cfg.Servers, cfg.SessionTimeout, zk.WithLogInfo(false), zk.WithLogger(zkLog{log}))
	if err != nil {
		return nil, fmt.Errorf("cluster: zookeeper %v: %w", cfg.Servers, err)
	}
	err = waitSession(conn, events, max(3*cfg.SessionTimeout, 30*time.Second))
	go func() {
		for range events { // drained until the client closes it
		}
	}()
	if err != nil {
		conn.Close()
		return nil, err
	}
	if err := ensurePath(conn, path); err != nil {
		conn.Close()
		return nil, err
	}
	data, err := json.Marshal(masterJSON(info))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("cluster: MasterInfo JSON: %w", err)
	}
	node, err := conn.Create(path+"/"+znodePrefix, data, zk.FlagEphemeral|zk.FlagSequence, zk.WorldACL(zk.PermAll))
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("cluster: zookeeper: create %s/%s: %w", path, znodePrefix, err)
	}
	c := &contender{conn: conn, node: node, log: log, onElected: onElected, stop: make(chan struct{}), done: make(chan struct{})}
	ch := c.read(path) // know the leader before serving anyone
	go c.watch(path, ch)
	log.Infof("cluster: master %s contends for leadership in ZooKeeper as %s", info.GetID(), node)
	return c, nil
}

// waitSession reads the client's events until it has a session.
func waitSession(conn *zk.Conn, events <-chan zk.Event, timeout time.Duration) error {
	deadline := time.After(timeout)
	for conn.State() != zk.StateHasSession {
		select {
		case _, ok := <-events:
			if !ok {
				return errors.New("cluster: zookeeper client closed before it had a session")
			}
		case <-deadline:
			return fmt.Errorf("cluster: no ZooKeeper session within %s (state %s)", timeout, conn.State())
		}
	}
	return nil
}

// ensurePath creates path and its parents, as Mesos' group membership does.
func ensurePath(conn *zk.Conn, path string) error {
	cur := ""
	for _, part := range strings.Split(strings.Trim(path, "/"), "/") {
		cur += "/" + part
		if _, err := conn.Create(cur, nil, 0, zk.WorldACL(zk.PermAll)); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			return fmt.Errorf("cluster: zookeeper: create %s: %w", cur, err)
		}
	}
	return nil
}

// read records the election's state and returns the watch on it (nil
// when reading failed).
func (c *contender) read(path string) <-chan zk.Event {
	children, _, ch, err := c.conn.ChildrenW(path)
	if err != nil {
		c.log.WithError(err).Warn("cluster: zookeeper: reading the election")
		return nil
	}
	c.elect(path, children)
	return ch
}

// watch follows the election until stop.
func (c *contender) watch(path string, ch <-chan zk.Event) {
	defer close(c.done)
	for {
		var retry <-chan time.Time
		if ch == nil {
			retry = time.After(time.Second)
		}
		select {
		case <-c.stop:
			return
		case <-ch:
		case <-retry:
		}
		ch = c.read(path)
	}
}

// elect records who leads among the json.info_ children of path.
func (c *contender) elect(path string, children []string) {
	lowest := lowestZnode(children)
	mine := c.node[strings.LastIndex(c.node, "/")+1:]
	leader := ""
	if lowest != "" && lowest != mine {
		if data, _, err := c.conn.Get(path + "/" + lowest); err == nil {
			leader = leaderAddr(data)
		}
	}
	c.mu.Lock()
	was := c.leading
	c.leading, c.leader = lowest == mine, leader
	c.mu.Unlock()
	if !was && lowest == mine {
		c.log.Infof("cluster: elected leading master (%s)", c.node)
		if c.onElected != nil {
			c.onElected()
		}
	}
}

// state is whether this master leads, else the leader's host:port ("" for none).
func (c *contender) state() (bool, string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leading, c.leader
}

// close ends the candidacy now: the znode goes with the session.
func (c *contender) close() {
	select {
	case <-c.stop:
	default:
		close(c.stop)
	}
	<-c.done
	c.conn.Close()
}

// lowestZnode is the json.info_ child with the lowest sequence number.
func lowestZnode(children []string) string {
	type cand struct {
		name string
		seq  uint64
	}
	var cs []cand
	for _, ch := range children {
		if seq, err := strconv.ParseUint(strings.TrimPrefix(ch, znodePrefix), 10, 64); err == nil && strings.HasPrefix(ch, znodePrefix) {
			cs = append(cs, cand{ch, seq})
		}
	}
	if len(cs) == 0 {
		return ""
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].seq < cs[j].seq })
	return cs[0].name
}

// mastersJSON is the MasterInfo JSON Mesos writes into its znode (the
// protobuf's JSON form: ip packed in network byte order, address nested).
type mastersJSON struct {
	ID       string `json:"id"`
	IP       uint32 `json:"ip"`
	Port     uint32 `json:"port"`
	PID      string `json:"pid,omitempty"`
	Hostname string `json:"hostname,omitempty"`
	Version  string `json:"version,omitempty"`
	Address  struct {
		Hostname string `json:"hostname,omitempty"`
		IP       string `json:"ip"`
		Port     int32  `json:"port"`
	} `json:"address"`
}

func masterJSON(info mesos.MasterInfo) mastersJSON {
	j := mastersJSON{ID: info.GetID(), IP: info.GetIP(), Port: info.GetPort(), PID: info.GetPID(), Hostname: info.GetHostname(), Version: info.GetVersion()}
	if a := info.GetAddress(); a != nil {
		j.Address.Hostname, j.Address.IP, j.Address.Port = a.GetHostname(), a.GetIP(), a.GetPort()
	}
	return j
}

// leaderAddr is host:port of a leader znode's MasterInfo: its address'
// hostname (else IP), else its hostname (else packed IP), and its port.
func leaderAddr(data []byte) string {
	var j mastersJSON
	if json.Unmarshal(data, &j) != nil {
		return ""
	}
	host, port := cmp.Or(j.Address.Hostname, j.Address.IP, j.Hostname), int(j.Address.Port)
	if host == "" && j.IP != 0 {
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, j.IP)
		host = net.IP(b).String()
	}
	if port == 0 {
		port = int(j.Port)
	}
	if host == "" || port == 0 {
		return ""
	}
	return net.JoinHostPort(host, strconv.Itoa(port))
}

// gate serves h only while the master leads, as a Mesos master does:
// otherwise it redirects to the leader ("//host:port/path", master/http.cpp
// redirect()) or answers 503 when none leads.
func gate(cur func() *contender, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c := cur()
		if c == nil {
			h.ServeHTTP(w, r)
			return
		}
		leading, leader := c.state()
		switch {
		case leading:
			h.ServeHTTP(w, r)
		case leader == "":
			http.Error(w, "No leader elected", http.StatusServiceUnavailable)
		default:
			w.Header().Set("Location", "//"+leader+r.URL.Path)
			w.WriteHeader(http.StatusTemporaryRedirect)
		}
	})
}

type zkLog struct{ log logrus.FieldLogger }

func (l zkLog) Printf(f string, args ...any) { l.log.Debugf("zookeeper: "+f, args...) }
