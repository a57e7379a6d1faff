package mesosbackend

import (
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesoslabel"
)

// Containerizers: flint.mesos.containerizer's values.
const (
	ContainerizerDocker = "docker" // Mesos' Docker containerizer: ContainerInfo type DOCKER with a DockerInfo
	ContainerizerMesos  = "mesos"  // Mesos' own containerizer: type MESOS, the image as an Image of type DOCKER
)

// Container is what the container keys ask of every executor
// (flint.mesos.executor.docker.*, flint.mesos.containerizer,
// flint.mesos.network.*, flint.mesos.executor.home), as Spark's
// spark.mesos.* counterparts. The zero value runs executors as bare
// processes.
type Container struct {
	Image         string            // flint.mesos.executor.docker.image; "" = none
	Containerizer string            // flint.mesos.containerizer: ContainerizerDocker or ContainerizerMesos
	Volumes       []mesos.Volume    // flint.mesos.executor.docker.volumes
	Parameters    []mesos.Parameter // flint.mesos.executor.docker.parameters (Docker containerizer only)
	ForcePull     bool              // flint.mesos.executor.docker.forcePullImage
	Network       string            // flint.mesos.network.name; "" = the host's network (Docker: its bridge)
	NetworkLabels []mesos.Label     // flint.mesos.network.labels
	Home          string            // flint.mesos.executor.home: the directory in the image (or on every agent) holding the executor binary; "" = fetched
}

// Enabled reports whether executors run in a container of their own.
func (c Container) Enabled() bool { return c.Image != "" || c.Network != "" }

// Docker reports whether executors run under Mesos' Docker containerizer.
func (c Container) Docker() bool { return c.Image != "" && c.Containerizer == ContainerizerDocker }

// OwnNetwork reports whether the container has a network of its own (a
// Docker bridge or user network, a CNI network): its servers then listen
// on every address of it and are reached through port mappings.
func (c Container) OwnNetwork() bool { return c.Docker() || c.Network != "" }

// Server is one of an executor's listening servers that a container maps a
// port to: the environment variables telling the executor the port it
// listens on in the container and the agent's port it is reached at.
type Server struct{ Port, HostPort string }

// Listening servers per mode, in the order their ports are taken from a
// launch's plan (placement's ExecutorLaunch.Ports, AgentSlots.ExecutorPorts).
// A coarse executor's gateway connection is outbound: only its shuffle
// server listens. A fine executor also serves kept results.
var (
	CoarseServers = []Server{{contract.EnvShufflePort, contract.EnvShuffleHostPort}}
	FineServers   = []Server{{contract.EnvResultPort, contract.EnvResultHostPort}, {contract.EnvShufflePort, contract.EnvShuffleHostPort}}
)

// readContainer reads and validates the container keys; every problem is
// one error naming its key.
func readContainer(cfg *config.Config) (Container, []error) {
	c := Container{
		Image:         strings.TrimSpace(cfg.String("flint.mesos.executor.docker.image")),
		Containerizer: strings.ToLower(strings.TrimSpace(cfg.String("flint.mesos.containerizer"))),
		ForcePull:     cfg.Bool("flint.mesos.executor.docker.forcePullImage"),
		Network:       strings.TrimSpace(cfg.String("flint.mesos.network.name")),
		Home:          strings.TrimSpace(cfg.String("flint.mesos.executor.home")),
	}
	var errs []error
	var err error
	if c.Volumes, err = ParseVolumes(cfg.String("flint.mesos.executor.docker.volumes")); err != nil {
		errs = append(errs, fmt.Errorf("flint.mesos.executor.docker.volumes: %w", err))
	}
	if c.Parameters, err = ParseParameters(cfg.String("flint.mesos.executor.docker.parameters")); err != nil {
		errs = append(errs, fmt.Errorf("flint.mesos.executor.docker.parameters: %w", err))
	}
	if c.NetworkLabels, err = mesoslabel.Parse(cfg.String("flint.mesos.network.labels")); err != nil {
		errs = append(errs, fmt.Errorf("flint.mesos.network.labels: %w", err))
	}
	return c, append(errs, c.check(cfg)...)
}

// check refuses combinations that would be ignored or that Mesos refuses.
func (c Container) check(cfg *config.Config) []error {
	var errs []error
	needImage := func(key string) {
		if cfg.Explicit(key) && c.Image == "" {
			errs = append(errs, fmt.Errorf("%s needs flint.mesos.executor.docker.image (it applies to the executors' image)", key))
		}
	}
	needImage("flint.mesos.executor.docker.volumes")
	needImage("flint.mesos.executor.docker.parameters")
	needImage("flint.mesos.executor.docker.forcePullImage")
	if len(c.Parameters) > 0 && c.Image != "" && !c.Docker() {
		errs = append(errs, errors.New("flint.mesos.executor.docker.parameters needs flint.mesos.containerizer=docker: Mesos' own containerizer passes no parameters to Docker"))
	}
	if len(c.NetworkLabels) > 0 && c.Network == "" {
		errs = append(errs, errors.New("flint.mesos.network.labels needs flint.mesos.network.name (they label that network's NetworkInfo)"))
	}
	if c.Home != "" && !path.IsAbs(c.Home) {
		errs = append(errs, fmt.Errorf("flint.mesos.executor.home %q must be an absolute path (in the image, or on every agent)", c.Home))
	}
	if c.Home != "" && strings.TrimSpace(cfg.String("flint.executor.uri")) != "" {
		errs = append(errs, errors.New("flint.mesos.executor.home and flint.executor.uri are exclusive: the image holds the executor binary, or agents fetch it"))
	}
	return errs
}

// ParseVolumes parses Spark's volume list: comma-separated
// [host_path:]container_path[:ro|:rw], read-write unless :ro. An empty
// list is none; an entry of another form is an error naming it, and so is
// one without a host path, which Spark accepts but Mesos' master refuses
// ("Only one of them should be set: 'host_path', 'image' and 'source'",
// src/common/validation.cpp) — the launch would fail on every agent.
func ParseVolumes(spec string) ([]mesos.Volume, error) {
	var vols []mesos.Volume
	for _, item := range splitList(spec) {
		parts := strings.Split(item, ":")
		mode := mesos.RW
		if n := len(parts); n > 1 && (parts[n-1] == "ro" || parts[n-1] == "rw") {
			if parts[n-1] == "ro" {
				mode = mesos.RO
			}
			parts = parts[:n-1]
		}
		v := mesos.Volume{Mode: mode.Enum()}
		switch {
		case len(parts) == 1 && parts[0] != "":
			return nil, fmt.Errorf("volume %q has no host path: Mesos refuses a volume without one (Only one of them should be set: 'host_path', 'image' and 'source')", item)
		case len(parts) == 2 && parts[0] != "" && parts[1] != "":
			host := parts[0]
			v.HostPath, v.ContainerPath = &host, parts[1]
		default:
			return nil, fmt.Errorf("volume %q is not [host_path:]container_path[:ro|:rw]", item)
		}
		vols = append(vols, v)
	}
	return vols, nil
}

// ParseParameters parses Spark's Docker parameter list: comma-separated
// key=value (docker run's --key=value). An entry without '=' or with an
// empty key is an error naming it.
func ParseParameters(spec string) ([]mesos.Parameter, error) {
	var params []mesos.Parameter
	for _, item := range splitList(spec) {
		k, v, ok := strings.Cut(item, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("parameter %q is not key=value", item)
		}
		params = append(params, mesos.Parameter{Key: strings.TrimSpace(k), Value: v})
	}
	return params, nil
}

// ContainerInfo is an executor's ContainerInfo (the same for coarse and
// fine executors): its secret volumes (Mesos secret volumes at their
// sandbox-relative path) and, with an image or a network, the container
// the keys ask for, whose port mappings map ports (the launch's ports,
// from its offer, one per server) to the same numbers inside. nil when
// the executor is a bare process with no secret file.
func (e Executor) ContainerInfo(ports []uint64) *mesos.ContainerInfo {
	vols := e.secretVolumes()
	c := e.Container
	if !c.Enabled() {
		if len(vols) == 0 {
			return nil
		}
		return &mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum(), Volumes: vols}
	}
	ci := &mesos.ContainerInfo{Type: mesos.ContainerInfo_MESOS.Enum(), Volumes: append(vols, c.Volumes...)}
	if c.Docker() {
		ci.Type, ci.Docker = mesos.ContainerInfo_DOCKER.Enum(), c.dockerInfo(ports)
	} else if c.Image != "" {
		cached := !c.ForcePull
		ci.Mesos = &mesos.ContainerInfo_MesosInfo{Image: &mesos.Image{Type: mesos.Image_DOCKER.Enum(),
			Docker: &mesos.Image_Docker{Name: c.Image}, Cached: &cached}}
	}
	if c.Network != "" {
		name := c.Network
		ni := mesos.NetworkInfo{Name: &name}
		if len(c.NetworkLabels) > 0 {
			ni.Labels = &mesos.Labels{Labels: append([]mesos.Label(nil), c.NetworkLabels...)}
		}
		if !c.Docker() {
			for _, p := range ports {
				ni.PortMappings = append(ni.PortMappings, mesos.NetworkInfo_PortMapping{HostPort: uint32(p), ContainerPort: uint32(p), Protocol: ptr("tcp")})
			}
		}
		ci.NetworkInfos = []mesos.NetworkInfo{ni}
	}
	return ci
}

// dockerInfo is the Docker containerizer's part: the image on Docker's
// bridge, or on the user network flint.mesos.network.name, with ports
// published.
func (c Container) dockerInfo(ports []uint64) *mesos.ContainerInfo_DockerInfo {
	network := mesos.ContainerInfo_DockerInfo_BRIDGE
	if c.Network != "" {
		network = mesos.ContainerInfo_DockerInfo_USER
	}
	force := c.ForcePull
	d := &mesos.ContainerInfo_DockerInfo{Image: c.Image, Network: network.Enum(), ForcePullImage: &force,
		Parameters: append([]mesos.Parameter(nil), c.Parameters...)}
	for _, p := range ports {
		d.PortMappings = append(d.PortMappings, mesos.ContainerInfo_DockerInfo_PortMapping{HostPort: uint32(p), ContainerPort: uint32(p), Protocol: ptr("tcp")})
	}
	return d
}

// secretVolumes are the Mesos secret volumes of secrets that go into files
// (read-only, at their sandbox-relative path).
func (e Executor) secretVolumes() []mesos.Volume {
	var vols []mesos.Volume
	for _, s := range e.Secrets {
		if s.File == "" {
			continue
		}
		sec := s.Secret
		vols = append(vols, mesos.Volume{ContainerPath: s.File, Mode: mesos.RO.Enum(),
			Source: &mesos.Volume_Source{Type: mesos.Volume_Source_SECRET, Secret: &sec}})
	}
	return vols
}

// PortEnv adds to env where the executor's servers listen and are
// reached: servers[i] takes ports[i] (container port = host port), and
// with a network of its own the executor listens on every address of it.
// The host port is named (the executor advertises its agent's host with
// it) except on a named network (flint.mesos.network.name: one IP per
// container), where the executor advertises its own address there with
// the container port, as Mesos' executors do (localip.Reached); the
// port stays mapped on the agent's host for clients off that network.
// Nothing when the launch took no port.
func (e Executor) PortEnv(servers []Server, ports []uint64, env map[string]string) {
	if len(ports) == 0 {
		return
	}
	for i, s := range servers {
		if i < len(ports) {
			p := strconv.FormatUint(ports[i], 10)
			env[s.Port] = p
			if e.Container.Network == "" {
				env[s.HostPort] = p
			}
		}
	}
	if e.Container.OwnNetwork() {
		env[contract.EnvBindAddress] = "0.0.0.0"
	}
}

// CommandInfo is an executor's CommandInfo: cmd run without a shell in
// the sandbox with uris fetched and env, as flint.proxyUser when set.
// Under the Docker containerizer the command is the container's
// entrypoint and its arguments follow it (Mesos' docker run), so argv[0]
// is not repeated there; elsewhere arguments[0] is argv[0].
func (e Executor) CommandInfo(uris []mesos.CommandInfo_URI, cmd string, env []mesos.Environment_Variable) *mesos.CommandInfo {
	no := false
	ci := &mesos.CommandInfo{URIs: uris, Shell: &no, Value: &cmd, Arguments: []string{cmd},
		Environment: &mesos.Environment{Variables: env}}
	if e.Container.Docker() {
		ci.Arguments = nil
	}
	return e.RunAs(ci)
}

// TaskLabels is every executor task's labels (flint.mesos.task.labels);
// nil when none.
func (e Executor) TaskLabels() *mesos.Labels {
	if len(e.Labels) == 0 {
		return nil
	}
	return &mesos.Labels{Labels: append([]mesos.Label(nil), e.Labels...)}
}

func ptr[T any](v T) *T { return &v }
