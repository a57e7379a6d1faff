package shuffleenv

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/config/shuffleconf"
	"github.com/flint-mesos/flint/framework/mapoutput"
	"github.com/flint-mesos/flint/framework/recordcodec"
	"github.com/flint-mesos/flint/internal/localip"
	"github.com/flint-mesos/flint/shuffle"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
	"github.com/flint-mesos/flint/shuffle/shufflefetch"
	"github.com/flint-mesos/flint/shuffle/shuffleserver"
	"github.com/flint-mesos/flint/shuffle/shuffleservice"
)

// Settings are an executor's shuffle settings.
type Settings struct {
	AppID      string
	ExecutorID string
	Host       string // the host reducers reach this executor at
	// Bind is the address the server listens on; empty means Host. (A
	// fine executor reports its agent's host name and listens on the IP
	// that routes to the driver.)
	Bind string
	// Port and HostPort are, in a container (contract.EnvShufflePort,
	// EnvShuffleHostPort), the port the server listens on and the
	// agent's port mapped to it, which it advertises with Host; without
	// a host port, bound to every address of a network of the
	// container's own, it advertises the container's own address with
	// Port (localip.Reached). Its store is then in the container's own
	// file system and not offered to same-host reads. 0: any free port,
	// advertised as listened on.
	Port, HostPort int
	Token          string // shuffleserver.Token(application secret, AppID)
	TLS            bool   // flint.network.tls.enabled
	// LocalDir is flint.local.dir; empty means $MESOS_SANDBOX, else the
	// system's temporary directory.
	LocalDir         string
	Memory           int64 // bytes of shuffle memory for the executor's tasks
	Compression      shuffleblock.Compression
	MaxBytesInFlight int64
	MaxReqsInFlight  int
	MaxRetries       int
	RetryWait        time.Duration
	Timeout          time.Duration // flint.shuffle.io.connectionTimeout
	// ServiceDir is the agent's external shuffle service's directory
	// (flint.shuffle.service.dir, when flint.shuffle.service.enabled):
	// the store lives there, the service serves it, and it outlives the
	// executor. Empty: the executor's own server serves a store it
	// deletes when it ends.
	ServiceDir string
}

// SettingsFromConfig reads the flint.shuffle.*, flint.reducer.*,
// flint.local.dir, flint.executor.memory and flint.network.tls.enabled
// keys; the identity fields come from the caller.
func SettingsFromConfig(c *config.Config, appID, executorID, host, token string) (Settings, error) {
	comp, err := shuffleblock.ParseCompression(c.String("flint.shuffle.compress.codec"))
	if err != nil {
		return Settings{}, err
	}
	mem, err := shuffleconf.Memory(c)
	if err != nil {
		return Settings{}, err
	}
	return Settings{
		AppID: appID, ExecutorID: executorID, Host: host, Token: token,
		TLS: c.Bool("flint.network.tls.enabled"), LocalDir: c.String("flint.local.dir"),
		Memory: mem, Compression: comp,
		MaxBytesInFlight: c.Size("flint.reducer.maxSizeInFlight"), MaxReqsInFlight: c.Int("flint.reducer.maxReqsInFlight"),
		MaxRetries: c.Int("flint.shuffle.io.maxRetries"), RetryWait: c.Duration("flint.shuffle.io.retryWait"),
		Timeout: c.Duration("flint.shuffle.io.connectionTimeout"),
	}, nil
}

// serviceStore registers the application with the agent's shuffle
// service and opens the executor's store in the service's directory.
func serviceStore(set Settings, log logrus.FieldLogger) (*shuffle.Store, *registration, error) {
	reg := &registration{set: set, root: shuffleservice.StoreRoot(set.ServiceDir, set.AppID, set.ExecutorID), log: log}
	if err := reg.register(); err != nil {
		return nil, nil, fmt.Errorf("shuffleenv: flint.shuffle.service.enabled: %w", err)
	}
	store, err := shuffle.OpenStore(reg.root)
	if err != nil {
		return nil, nil, err
	}
	return store, reg, nil
}

// Env is an executor's shuffle. Safe for concurrent use by its tasks.
type Env struct {
	set    Settings
	store  *shuffle.Store
	mem    *shuffle.Memory
	server *shuffleserver.Server // nil: not serving (local mode) or the service serves
	// service says the agent's shuffle service serves the store, which
	// outlives the executor.
	service bool
	client  *shuffleserver.Client
	loc     mapoutput.Location // without a service; with one, svc.loc
	svc     *registration      // the service's registration; nil without a service
	log     logrus.FieldLogger

	nsMu       sync.Mutex
	namespaces map[string]*Namespace
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

// Start makes the executor's store and, when serve is set, starts its
// shuffle server.
func Start(set Settings, serve bool, log logrus.FieldLogger) (*Env, error) {
	if set.AppID == "" || set.Memory <= 0 {
		return nil, errors.New("shuffleenv: an application id and shuffle memory are required")
	}
	if log == nil {
		log = logrus.StandardLogger()
	}
	if set.ServiceDir != "" {
		return startWithService(set, serve, log)
	}
	base := set.LocalDir
	if base == "" {
		base = cmpOr(os.Getenv("MESOS_SANDBOX"), os.TempDir())
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("shuffleenv: local dir: %w", err)
	}
	root, err := os.MkdirTemp(base, "flint-shuffle-"+unsafeChars.ReplaceAllString(set.AppID+"-"+set.ExecutorID, "_")+"-")
	if err != nil {
		return nil, fmt.Errorf("shuffleenv: local dir: %w", err)
	}
	store, err := shuffle.OpenStore(root)
	if err != nil {
		return nil, err
	}
	e := &Env{set: set, store: store, mem: shuffle.NewMemory(set.Memory), log: log,
		loc: mapoutput.Location{ExecutorID: set.ExecutorID, Host: set.Host, Address: shuffleserver.Address{Dir: root}.String()}}
	if serve {
		if set.Token == "" {
			store.Close()
			return nil, errors.New("shuffleenv: serving needs the application's shuffle token")
		}
		sc := shuffleserver.Config{Store: store, AppID: set.AppID, Token: set.Token, Host: cmpOr(set.Bind, set.Host), TLS: set.TLS, Log: log, Port: set.Port}
		adv, err := localip.Reached(set.Host, set.Bind, set.Port, set.HostPort)
		if err != nil {
			store.Close()
			return nil, fmt.Errorf("shuffleenv: the shuffle server's address in the container: %w", err)
		}
		if adv != "" {
			sc.Advertise, sc.NoDir = adv, true
		}
		e.server, err = shuffleserver.Start(sc)
		if err != nil {
			store.Close()
			return nil, err
		}
		e.loc.Address = e.server.Address().String()
		e.client = shuffleserver.NewClient(set.AppID, set.Token, cmpOr(set.Timeout, 120*time.Second))
	}
	return e, nil
}

// startWithService is Start for an executor whose outputs the agent's
// shuffle service serves: its store is in the service's directory and
// its map statuses name the service; it still fetches with its own
// client. serve must be set (local mode has no agent).
func startWithService(set Settings, serve bool, log logrus.FieldLogger) (*Env, error) {
	if !serve {
		return nil, errors.New("shuffleenv: the external shuffle service serves executors' outputs; local mode has none")
	}
	if set.Token == "" {
		return nil, errors.New("shuffleenv: serving needs the application's shuffle token")
	}
	store, reg, err := serviceStore(set, log)
	if err != nil {
		return nil, err
	}
	return &Env{set: set, store: store, mem: shuffle.NewMemory(set.Memory), log: log, svc: reg, service: true,
		client: shuffleserver.NewClient(set.AppID, set.Token, cmpOr(set.Timeout, 120*time.Second))}, nil
}

func cmpOr[T comparable](a, b T) T {
	var zero T
	if a != zero {
		return a
	}
	return b
}

// Location is where this executor's map outputs are read from: its own
// server, or the agent's shuffle service — the one running now: when the
// service restarted since the last call (a new InfoFile), the executor
// registers with the new one first (registration.current), so an output
// reported from now on names the service that serves it.
func (e *Env) Location() mapoutput.Location {
	if e.svc == nil {
		return e.loc
	}
	addr := e.svc.current()
	return mapoutput.Location{ExecutorID: e.set.ExecutorID, Host: e.set.Host, Address: addr.String()}
}

// Dir is the executor's shuffle directory.
func (e *Env) Dir() string { return e.store.Root() }

// Memory is the executor's shuffle memory pool.
func (e *Env) Memory() *shuffle.Memory { return e.mem }

// WriterConfig is the configuration of map task attempt attempt's output
// mapIndex of shuffleID, with its share of the executor's memory.
func (e *Env) WriterConfig(shuffleID, mapIndex, attempt, partitions int, order shuffle.Order) shuffle.Config {
	return shuffle.Config{Store: e.store, ShuffleID: shuffleID, MapIndex: mapIndex, Attempt: attempt, Partitions: partitions,
		Order: order, Compression: e.set.Compression, Memory: e.mem.Task()}
}

// Writer is a map task's writer of encoded records.
func (e *Env) Writer(shuffleID, mapIndex, attempt, partitions int, order shuffle.Order) (*shuffle.Writer, error) {
	return shuffle.NewWriter(e.WriterConfig(shuffleID, mapIndex, attempt, partitions, order))
}

// CombiningWriter is a map task's writer with map-side combine.
func CombiningWriter[K, V, C any](e *Env, shuffleID, mapIndex, attempt, partitions int, keys recordcodec.Codec[K], combiners recordcodec.Codec[C], agg shuffle.Aggregator[V, C]) (*shuffle.CombiningWriter[K, V, C], error) {
	return shuffle.NewCombiningWriter(e.WriterConfig(shuffleID, mapIndex, attempt, partitions, shuffle.ByteOrder), keys, combiners, agg)
}

// Status is the map status of a committed output, for the driver.
func (e *Env) Status(shuffleID, mapIndex int, taskID uint64, res shuffle.Result) mapoutput.Status {
	return mapoutput.Status{ShuffleID: shuffleID, MapIndex: mapIndex, TaskID: taskID, Location: e.Location(), Sizes: res.Sizes}
}

// Reader is a reduce partition's merged records. Close it: that deletes
// its spills and gives its memory back.
type Reader struct {
	*shufflefetch.Reader
	grant *shuffle.Grant
	dir   string
}

// Close releases the reader's files and memory.
func (r *Reader) Close() error {
	err := r.Reader.Close()
	r.grant.Release()
	if rerr := os.RemoveAll(r.dir); err == nil {
		err = rerr
	}
	return err
}

// Read fetches and merges reduce partition reduce of the snapshot's
// shuffle. A block that cannot be read is a *mapoutput.FetchFailure.
func (e *Env) Read(ctx context.Context, snap *mapoutput.Snapshot, reduce int, order shuffle.Order, combine shuffle.Combine) (*Reader, error) {
	groups, err := snap.Blocks(reduce, reduce+1)
	if err != nil {
		return nil, err
	}
	return e.ReadBlocks(ctx, snap.ShuffleID, reduce, groups, order, combine)
}

// ReadBlocks fetches and merges reduce partition reduce of shuffleID from
// the blocks the driver listed (a stage task's read, from the map-output
// tracker at launch). A block that cannot be read is a
// *mapoutput.FetchFailure.
func (e *Env) ReadBlocks(ctx context.Context, shuffleID, reduce int, groups []mapoutput.FetchGroup, order shuffle.Order, combine shuffle.Combine) (*Reader, error) {
	if e.svc != nil {
		// registered with a restarted service; and the store's directory
		// back even while none runs (a service that died with its files
		// took it): the spills go there, and a block it lost is then a
		// fetch failure, not this executor's
		e.svc.current()
		if err := os.MkdirAll(e.store.Root(), 0o700); err != nil {
			return nil, fmt.Errorf("shuffleenv: %w", err)
		}
	}
	spill, err := os.MkdirTemp(e.store.Root(), "reduce-"+strconv.Itoa(shuffleID)+"-"+strconv.Itoa(reduce)+"-")
	if err != nil {
		return nil, fmt.Errorf("shuffleenv: %w", err)
	}
	grant := e.mem.Task()
	cfg := shufflefetch.Config{Client: e.client, Host: e.set.Host, MaxBytesInFlight: e.set.MaxBytesInFlight, MaxReqsInFlight: e.set.MaxReqsInFlight,
		MaxRetries: e.set.MaxRetries, RetryWait: e.set.RetryWait, Memory: grant, SpillDir: spill, Compression: e.set.Compression,
		Rand: rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), uint64(reduce)))}
	r, err := shufflefetch.Read(ctx, cfg, shufflefetch.Request{ShuffleID: shuffleID, Groups: groups}, order, combine)
	if err != nil {
		grant.Release()
		os.RemoveAll(spill)
		return nil, err
	}
	return &Reader{Reader: r, grant: grant, dir: spill}, nil
}

// Release deletes shuffleID's outputs on this executor.
func (e *Env) Release(shuffleID int) error { return e.store.RemoveShuffle(shuffleID) }

// ReleaseNamespace deletes every output of namespace ns on this executor
// and stops serving it: the driver no longer tracks any of them (the
// dataset run that wrote them ended). A task of the run still writing
// into it afterwards opens it anew.
func (e *Env) ReleaseNamespace(ns string) error {
	e.nsMu.Lock()
	n := e.namespaces[ns]
	delete(e.namespaces, ns)
	e.nsMu.Unlock()
	if n == nil {
		return nil
	}
	if e.server != nil {
		e.server.Unserve(ns)
	}
	return n.Store.Close()
}

// ReleaseShuffle applies a driver's ReleaseShuffle: one shuffle of the
// executor's own ids, one of a namespace, or a whole namespace.
func (e *Env) ReleaseShuffle(ns string, shuffleID int, all bool) error {
	switch {
	case ns == "":
		return e.Release(shuffleID)
	case all:
		return e.ReleaseNamespace(ns)
	}
	e.nsMu.Lock()
	n := e.namespaces[ns]
	e.nsMu.Unlock()
	if n == nil {
		return nil
	}
	return n.Store.RemoveShuffle(shuffleID)
}

// HoldsOutputs reports whether any committed map output is on this
// executor: a fine-grained executor must not exit on idle while it does.
// Outputs the agent's shuffle service serves are the service's to hold.
func (e *Env) HoldsOutputs() bool {
	if e.service {
		return false
	}
	dirs, _ := filepath.Glob(filepath.Join(e.store.Root(), "shuffle_*", "*.index"))
	inNS, _ := filepath.Glob(filepath.Join(e.store.Root(), "ns", "*", "shuffle_*", "*.index"))
	for _, d := range append(dirs, inNS...) {
		if !strings.HasPrefix(filepath.Base(d), ".") {
			return true
		}
	}
	return false
}

// Close stops serving and deletes the executor's shuffle directory —
// unless the agent's shuffle service serves it: then the outputs stay for
// reducers (the driver releases them through the service).
func (e *Env) Close() error {
	var errs []error
	if e.server != nil {
		errs = append(errs, e.server.Close())
	}
	if e.client != nil {
		e.client.Close()
	}
	if !e.service {
		errs = append(errs, e.store.Close())
	}
	return errors.Join(errs...)
}

type envKey struct{}

// NewContext returns ctx carrying env: executors set it as every task's
// base context (executor.Config.BaseContext), so a map or reduce task
// finds its executor's shuffle with FromContext.
func NewContext(ctx context.Context, env *Env) context.Context {
	return context.WithValue(ctx, envKey{}, env)
}

// FromContext is the executor's shuffle, if the executor has one.
func FromContext(ctx context.Context) (*Env, bool) {
	e, ok := ctx.Value(envKey{}).(*Env)
	return e, ok && e != nil
}

// Serving reports whether the executor's outputs are served (not local
// mode): by its own server or by the agent's shuffle service.
func (e *Env) Serving() bool { return e.server != nil || e.service }

// Namespace is a store of its own inside the executor's shuffle
// directory, served by the executor's server under namespace ns: the
// dataset layer keeps one per run, so shuffle ids of different runs never
// meet. The same ns gives the same namespace.
type Namespace struct {
	Store *shuffle.Store
	loc   mapoutput.Location // served by the executor's server
	ns    string
	svc   *registration // served by the agent's service (nil: by the executor's server)
}

// openNamespace opens namespace ns's store and starts serving it: by the
// executor's server, or by the agent's service from the service's layout.
func (e *Env) openNamespace(ns string) (*shuffle.Store, shuffleserver.Address, error) {
	if e.service {
		if !shuffleserver.ValidID(ns) {
			return nil, shuffleserver.Address{}, fmt.Errorf("shuffleenv: bad namespace %q", ns)
		}
		store, err := shuffle.OpenStore(shuffleservice.NamespaceRoot(e.set.ServiceDir, e.set.AppID, e.set.ExecutorID, ns))
		if err != nil {
			return nil, shuffleserver.Address{}, err
		}
		return store, shuffleserver.Address{}, nil // its address is the service's of the moment (Namespace.Location)
	}
	store, err := shuffle.OpenStore(filepath.Join(e.store.Root(), "ns", unsafeChars.ReplaceAllString(ns, "_")))
	if err != nil {
		return nil, shuffleserver.Address{}, err
	}
	addr, err := e.server.Serve(ns, store)
	if err != nil {
		return nil, shuffleserver.Address{}, err
	}
	return store, addr, nil
}

// Location is where the namespace's map outputs are read from: the
// executor's server, or the agent's shuffle service running now (see
// Env.Location).
func (n *Namespace) Location() mapoutput.Location {
	if n.svc == nil {
		return n.loc
	}
	addr := n.svc.current()
	addr.Dir, addr.Namespace = n.Store.Root(), n.ns
	return mapoutput.Location{ExecutorID: n.loc.ExecutorID, Host: n.loc.Host, Address: addr.String()}
}

// Namespace opens (once) namespace ns.
func (e *Env) Namespace(ns string) (*Namespace, error) {
	e.nsMu.Lock()
	defer e.nsMu.Unlock()
	if n := e.namespaces[ns]; n != nil {
		return n, nil
	}
	if e.server == nil && !e.service {
		return nil, errors.New("shuffleenv: namespaces need a serving executor")
	}
	store, addr, err := e.openNamespace(ns)
	if err != nil {
		return nil, err
	}
	n := &Namespace{Store: store, ns: ns, svc: e.svc, loc: mapoutput.Location{ExecutorID: e.set.ExecutorID, Host: e.set.Host}}
	if e.svc == nil {
		n.loc.Address = addr.String()
	}
	if e.namespaces == nil {
		e.namespaces = map[string]*Namespace{}
	}
	e.namespaces[ns] = n
	return n, nil
}

// FromContainer reads where the shuffle server listens in a container —
// contract.EnvShufflePort, EnvShuffleHostPort and EnvBindAddress, which
// the backends set for executors in a container — into set (nothing when
// unset). A malformed port is an error naming the variable.
func (set *Settings) FromContainer(getenv func(string) string) error {
	var err error
	if set.Port, err = envPort(getenv, contract.EnvShufflePort); err != nil {
		return err
	}
	if set.HostPort, err = envPort(getenv, contract.EnvShuffleHostPort); err != nil {
		return err
	}
	if b := getenv(contract.EnvBindAddress); b != "" && set.Port > 0 {
		set.Bind = b
	}
	return nil
}

// envPort reads a port number from variable name; 0 when unset.
func envPort(getenv func(string) string, name string) (int, error) {
	v := getenv(name)
	if v == "" {
		return 0, nil
	}
	p, err := strconv.Atoi(v)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("shuffleenv: %s=%q is not a port", name, v)
	}
	return p, nil
}
