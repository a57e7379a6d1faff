package detector

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"
)

// leaderPrefix names Mesos' JSON leader-election znodes (json.info_0000000001, …).
const leaderPrefix = "json.info_"

// ZK detects the leading master from Mesos' ZooKeeper leader election.
type ZK struct {
	Servers        []string
	Path           string // e.g. /mesos
	Auth           string // "user:pass" for digest authentication, or empty
	SessionTimeout time.Duration
	RetryInterval  time.Duration // wait after a failed read before reading again
	Logger         logrus.FieldLogger
}

var _ Detector = (*ZK)(nil)

// NewZK returns a ZooKeeper detector with defaults (10 s session timeout, 1 s retry interval).
func NewZK(servers []string, path string, log logrus.FieldLogger) *ZK {
	if log == nil {
		log = logrus.New()
	}
	return &ZK{Servers: servers, Path: path, SessionTimeout: 10 * time.Second, RetryInterval: time.Second, Logger: log}
}

// New returns the Detector for a parsed master URL.
func New(u URL, log logrus.FieldLogger) Detector {
	if u.IsZK() {
		z := NewZK(u.ZKServers, u.ZKPath, log)
		z.Auth = u.ZKAuth
		return z
	}
	return Static(u.Addr)
}

type zkLogger struct{ log logrus.FieldLogger }

func (l zkLogger) Printf(f string, args ...any) { l.log.Debugf("zookeeper: "+f, args...) }

// Watch connects to ZooKeeper and reports the leader until ctx is done.
func (z *ZK) Watch(ctx context.Context) <-chan Leader {
	out := make(chan Leader, 1)
	go func() {
		defer close(out)
		conn, events, err := zk.Connect(z.Servers, z.SessionTimeout, zk.WithLogger(zkLogger{z.Logger}), zk.WithLogInfo(false))
		if err != nil {
			z.Logger.WithError(err).Error("detector: cannot use ZooKeeper servers")
			<-ctx.Done()
			return
		}
		defer func() {
			conn.Close()
			for range events { // closed once the client's goroutines are gone
			}
		}()
		if z.Auth != "" {
			if err := conn.AddAuth("digest", []byte(z.Auth)); err != nil {
				z.Logger.WithError(err).Warn("detector: ZooKeeper authentication failed")
			}
		}
		z.loop(ctx, conn, out)
	}()
	return out
}

func (z *ZK) loop(ctx context.Context, conn *zk.Conn, out chan Leader) {
	var last Leader
	first := true
	for {
		l, watch, err := z.read(conn)
		if err != nil {
			z.Logger.WithError(err).Warnf("detector: reading leader from zk %s%s", strings.Join(z.Servers, ","), z.Path)
			select {
			case <-ctx.Done():
				return
			case <-time.After(z.RetryInterval):
			}
			continue
		}
		if first || !l.Same(last) {
			first, last = false, l
			if l.IsZero() {
				z.Logger.Warnf("detector: no leading Mesos master under %s", z.Path)
			} else {
				z.Logger.Infof("detector: leading Mesos master is %s (%s)", l.Addr, l.ID)
			}
			publish(out, l)
		}
		select {
		case <-ctx.Done():
			return
		case <-watch:
		}
	}
}

// read returns the current leader and a channel that fires when it may have changed.
func (z *ZK) read(conn *zk.Conn) (Leader, <-chan zk.Event, error) {
	for {
		children, _, watch, err := conn.ChildrenW(z.Path)
		if errors.Is(err, zk.ErrNoNode) {
			// No election yet: wait for the path to appear. If it appeared
			// since ChildrenW, ExistsW's watch would fire only on its
			// deletion or a change of its data, never on a contender joining
			// under it: list again instead of waiting on it.
			exists, _, watch, err := conn.ExistsW(z.Path)
			if err == nil && exists {
				continue
			}
			return Leader{}, watch, err
		}
		if err != nil {
			return Leader{}, nil, err
		}
		node := lowest(children)
		if node == "" {
			return Leader{}, watch, nil
		}
		data, _, err := conn.Get(z.Path + "/" + node)
		if errors.Is(err, zk.ErrNoNode) {
			continue // the leader went away between the two reads: list again
		}
		if err != nil {
			return Leader{}, nil, err
		}
		l, err := ParseMasterInfo(data)
		if err != nil {
			return Leader{}, nil, fmt.Errorf("znode %s/%s: %w", z.Path, node, err)
		}
		return l, watch, nil
	}
}

// lowest returns the contender with the lowest sequence number, or "".
func lowest(children []string) string {
	type contender struct {
		name string
		seq  uint64
	}
	var cs []contender
	for _, c := range children {
		if !strings.HasPrefix(c, leaderPrefix) {
			continue
		}
		seq, err := strconv.ParseUint(strings.TrimPrefix(c, leaderPrefix), 10, 64)
		if err != nil {
			continue
		}
		cs = append(cs, contender{c, seq})
	}
	if len(cs) == 0 {
		return ""
	}
	sort.Slice(cs, func(i, j int) bool { return cs[i].seq < cs[j].seq })
	return cs[0].name
}

// masterInfoJSON is the part of Mesos' MasterInfo JSON the detector reads.
type masterInfoJSON struct {
	ID       string `json:"id"`
	IP       uint32 `json:"ip"` // IPv4 in network byte order
	Port     uint32 `json:"port"`
	PID      string `json:"pid"`
	Hostname string `json:"hostname"`
	Version  string `json:"version"`
	Address  *struct {
		Hostname string `json:"hostname"`
		IP       string `json:"ip"`
		Port     int32  `json:"port"`
	} `json:"address"`
}

// ParseMasterInfo decodes a leader znode's JSON MasterInfo. The address to reach is, in order of
// preference, address.hostname, address.ip, hostname, then ip; the port address.port, then port.
func ParseMasterInfo(data []byte) (Leader, error) {
	var m masterInfoJSON
	if err := json.Unmarshal(data, &m); err != nil {
		return Leader{}, fmt.Errorf("detector: MasterInfo JSON: %w", err)
	}
	var ip4 string
	if m.IP != 0 {
		b := make([]byte, 4)
		binary.LittleEndian.PutUint32(b, m.IP)
		ip4 = net.IP(b).String()
	}
	host, port := m.Hostname, m.Port
	host = cmp.Or(host, ip4)
	info := mesos.MasterInfo{ID: m.ID, IP: m.IP, Port: u32p(m.Port), PID: strp(m.PID), Hostname: strp(m.Hostname), Version: strp(m.Version)}
	if a := m.Address; a != nil {
		info.Address = &mesos.Address{Hostname: strp(a.Hostname), IP: strp(a.IP), Port: a.Port}
		if a.Hostname != "" {
			host = a.Hostname
		} else if a.IP != "" {
			host = a.IP
		}
		if a.Port > 0 {
			port = uint32(a.Port)
		}
	}
	if host == "" || port == 0 || port > 65535 {
		return Leader{}, fmt.Errorf("detector: MasterInfo %q has no usable address", data)
	}
	return Leader{ID: m.ID, Addr: net.JoinHostPort(host, strconv.Itoa(int(port))), Info: info}, nil
}

func strp(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
