package containerizer

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	dc "github.com/ory/dockertest/v3/docker"
)

// DockerSandbox is where a Docker container sees its sandbox, as Mesos'
// Docker containerizer mounts it (--sandbox_directory, MESOS_SANDBOX).
const DockerSandbox = "/mnt/mesos/sandbox"

// DockerNamePrefix starts the name of every container the agent creates
// (Mesos' DOCKER_NAME_PREFIX): "mesos-" and the Mesos container id.
const DockerNamePrefix = "mesos-"

// Docker is Mesos' Docker containerizer over the local Docker Engine API
// (src/slave/containerizer/docker.cpp): a DOCKER ContainerInfo's process
// runs in a container of DockerInfo.image with the sandbox mounted at
// DockerSandbox. minimesos pulls from no registry: the image must be on
// the daemon already (built locally, e.g. FROM scratch).
type Docker struct {
	client *dc.Client
}

// NewDocker connects to the Docker daemon at endpoint ("" : DOCKER_HOST,
// else unix:///var/run/docker.sock) and checks that it answers.
func NewDocker(endpoint string) (*Docker, error) {
	var c *dc.Client
	var err error
	if endpoint == "" {
		c, err = dc.NewClientFromEnv()
	} else {
		c, err = dc.NewClient(endpoint)
	}
	if err != nil {
		return nil, fmt.Errorf("containerizer: docker client: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.PingWithContext(ctx); err != nil {
		return nil, fmt.Errorf("containerizer: the Docker containerizer needs a reachable Docker daemon at %s: %w", c.Endpoint(), err)
	}
	return &Docker{client: c}, nil
}

// DockerSpec is one container to run: the process of Spec in a container
// named Name, whose port mappings must take host ports from Resources
// (the task's and executor's, as Mesos checks them).
type DockerSpec struct {
	Spec
	Name      string
	Resources []mesos.Resource
}

// Launch creates and starts spec's container. Its stdout and stderr are
// appended to the sandbox's files; the Process ends when the container
// exits (Status.Code is its exit code), and the container is then removed.
// Kill signals the container (SIGTERM, SIGKILL after the grace period, as
// `docker stop -t`). Failures are ErrLaunch in Mesos' words.
func (d *Docker) Launch(spec DockerSpec) (*Process, error) {
	sec, err := resolveSecrets(spec.Secrets, spec.Command.Environment, spec.Container)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	if err := writeSecretFiles(spec.Sandbox, sec.files); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	opts, err := runOptions(spec, withSecretEnv(spec.Env, sec.env))
	if err != nil {
		return nil, err
	}
	di := spec.Container.GetDocker()
	if _, err := d.client.InspectImage(di.Image); err != nil || di.GetForcePullImage() {
		return nil, launchRefusal(fmt.Sprintf("Failed to run 'docker pull %s': minimesos pulls from no registry and the image is not on the Docker daemon (%v)", di.Image, pullCause(err, di.GetForcePullImage())))
	}
	c, err := d.client.CreateContainer(opts)
	if err != nil {
		return nil, launchRefusal(fmt.Sprintf("Failed to run container '%s': %v", spec.Name, err))
	}
	if err := d.client.StartContainer(c.ID, nil); err != nil {
		d.remove(c.ID)
		return nil, launchRefusal(fmt.Sprintf("Failed to run container '%s': %v", spec.Name, err))
	}
	return d.watch(spec, c.ID)
}

func pullCause(err error, force bool) string {
	if force {
		return "force_pull_image is set"
	}
	return err.Error()
}

// watch makes the Process of a started container: logs copied to the
// sandbox, exit code collected, container removed.
func (d *Docker) watch(spec DockerSpec, id string) (*Process, error) {
	stdout, err := os.OpenFile(filepath.Join(spec.Sandbox, "stdout"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		d.remove(id)
		return nil, fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	stderr, err := os.OpenFile(filepath.Join(spec.Sandbox, "stderr"), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		stdout.Close()
		d.remove(id)
		return nil, fmt.Errorf("%w: %v", ErrLaunch, err)
	}
	p := &Process{done: make(chan struct{}), clk: spec.Clock}
	if c, err := d.client.InspectContainer(id); err == nil && c.State.Pid > 0 {
		p.pid = c.State.Pid
		p.startTime, _ = ProcStartTime(p.pid)
	}
	p.signal = func(sig syscall.Signal) {
		_ = d.client.KillContainer(dc.KillContainerOptions{ID: id, Signal: dc.Signal(sig)})
	}
	go func() {
		defer stdout.Close()
		defer stderr.Close()
		_ = d.client.Logs(dc.LogsOptions{Container: id, OutputStream: stdout, ErrorStream: stderr, Follow: true, Stdout: true, Stderr: true})
		code, err := d.client.WaitContainer(id)
		if err != nil {
			p.status = Status{Unknown: true}
		} else {
			p.status = Status{Exited: true, Code: code}
		}
		d.remove(id)
		close(p.done)
	}()
	return p, nil
}

func (d *Docker) remove(id string) {
	_ = d.client.RemoveContainer(dc.RemoveContainerOptions{ID: id, Force: true, RemoveVolumes: true})
}

// runOptions is `docker run` for spec, as Mesos' Docker::RunOptions::create
// (src/docker/docker.cpp) builds it.
func runOptions(spec DockerSpec, env []string) (dc.CreateContainerOptions, error) {
	ci := spec.Container
	di := ci.GetDocker()
	if di == nil || di.Image == "" {
		return dc.CreateContainerOptions{}, launchRefusal("DockerInfo 'docker' is not set for DOCKER typed ContainerInfo")
	}
	env = append(replaceEnv(env, "MESOS_SANDBOX", DockerSandbox), "MESOS_CONTAINER_NAME="+spec.Name)
	cfg := &dc.Config{Image: di.Image, Env: env, WorkingDir: DockerSandbox, Labels: map[string]string{}}
	host := &dc.HostConfig{Binds: []string{spec.Sandbox + ":" + DockerSandbox + ":rw"}}
	setCommand(cfg, spec.Command)
	binds, err := volumeBinds(ci.Volumes, spec.Sandbox)
	if err != nil {
		return dc.CreateContainerOptions{}, err
	}
	host.Binds = append(host.Binds, binds...)
	if err := setNetwork(cfg, host, ci, spec.Resources); err != nil {
		return dc.CreateContainerOptions{}, err
	}
	if err := setParameters(cfg, host, di.Parameters); err != nil {
		return dc.CreateContainerOptions{}, err
	}
	return dc.CreateContainerOptions{Name: spec.Name, Config: cfg, HostConfig: host}, nil
}

// setCommand, as Mesos' Docker::RunOptions::create: a shell command runs
// as `--entrypoint /bin/sh IMAGE -c value`; otherwise value and the
// arguments follow the image (its ENTRYPOINT, if any, runs them; in an
// image without one value is the program and the arguments its argv[1:]).
func setCommand(cfg *dc.Config, c mesos.CommandInfo) {
	if c.Shell == nil || *c.Shell {
		if c.GetValue() != "" {
			cfg.Entrypoint, cfg.Cmd = []string{"/bin/sh"}, []string{"-c", c.GetValue()}
		}
		return
	}
	var args []string
	if c.GetValue() != "" {
		args = append(args, c.GetValue())
	}
	cfg.Cmd = append(args, c.Arguments...)
}

func replaceEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// volumeBinds: a volume with a host path is a bind mount (a relative host
// path is in the sandbox, a relative container path under DockerSandbox);
// secret volumes were written into the sandbox; others are refused.
func volumeBinds(vols []mesos.Volume, sandbox string) ([]string, error) {
	var out []string
	for _, v := range vols {
		if v.GetSource().GetType() == mesos.Volume_Source_SECRET {
			continue
		}
		if v.HostPath == nil {
			return nil, launchRefusal(fmt.Sprintf("Volume '%s' of a DOCKER container has no host path: minimesos' Docker containerizer mounts host paths only", v.ContainerPath))
		}
		hostPath, ctr := v.GetHostPath(), v.ContainerPath
		if !filepath.IsAbs(hostPath) {
			hostPath = filepath.Join(sandbox, hostPath)
		}
		if !filepath.IsAbs(ctr) {
			ctr = filepath.Join(DockerSandbox, ctr)
		}
		mode := "rw"
		if v.GetMode() == mesos.RO {
			mode = "ro"
		}
		out = append(out, hostPath+":"+ctr+":"+mode)
	}
	return out, nil
}

// setNetwork: HOST, BRIDGE (the default), NONE or USER (the network
// named by the first NetworkInfo); port mappings only on BRIDGE and USER,
// each host port within the ports resources ("Port [N] not included in
// resources", as Mesos).
func setNetwork(cfg *dc.Config, host *dc.HostConfig, ci *mesos.ContainerInfo, res []mesos.Resource) error {
	di := ci.GetDocker()
	net := di.GetNetwork()
	switch net {
	case mesos.ContainerInfo_DockerInfo_HOST:
		host.NetworkMode = "host"
	case mesos.ContainerInfo_DockerInfo_BRIDGE:
		host.NetworkMode = "bridge"
	case mesos.ContainerInfo_DockerInfo_NONE:
		host.NetworkMode = "none"
	case mesos.ContainerInfo_DockerInfo_USER:
		if len(ci.NetworkInfos) != 1 || ci.NetworkInfos[0].GetName() == "" {
			return launchRefusal("Only a single network can be defined in Docker run")
		}
		host.NetworkMode = ci.NetworkInfos[0].GetName()
	}
	if len(di.PortMappings) == 0 {
		return nil
	}
	if net != mesos.ContainerInfo_DockerInfo_BRIDGE && net != mesos.ContainerInfo_DockerInfo_USER {
		return launchRefusal("Port mappings are only supported for bridge and user-defined networks")
	}
	cfg.ExposedPorts = map[dc.Port]struct{}{}
	host.PortBindings = map[dc.Port][]dc.PortBinding{}
	for _, m := range di.PortMappings {
		if !portInResources(uint64(m.HostPort), res) {
			return launchRefusal("Port [" + strconv.FormatUint(uint64(m.HostPort), 10) + "] not included in resources")
		}
		proto := strings.ToLower(m.GetProtocol())
		if proto == "" {
			proto = "tcp"
		}
		p := dc.Port(strconv.FormatUint(uint64(m.ContainerPort), 10) + "/" + proto)
		cfg.ExposedPorts[p] = struct{}{}
		host.PortBindings[p] = append(host.PortBindings[p], dc.PortBinding{HostPort: strconv.FormatUint(uint64(m.HostPort), 10)})
	}
	return nil
}

func portInResources(port uint64, res []mesos.Resource) bool {
	for _, r := range res {
		if r.Name != "ports" {
			continue
		}
		for _, rg := range r.GetRanges().GetRange() {
			if rg.Begin <= port && port <= rg.End {
				return true
			}
		}
	}
	return false
}

// ErrParameter: a Docker parameter minimesos' Docker containerizer does
// not translate to the Engine API.
var ErrParameter = errors.New("unsupported Docker parameter")

// setParameters applies DockerInfo.parameters (`docker run --KEY VALUE`):
// label, env, hostname, user, workdir, memory (bytes), add-host, cap-add,
// cap-drop; any other key fails the launch.
func setParameters(cfg *dc.Config, host *dc.HostConfig, ps []mesos.Parameter) error {
	for _, p := range ps {
		switch p.Key {
		case "label":
			k, v, _ := strings.Cut(p.Value, "=")
			cfg.Labels[k] = v
		case "env", "e":
			cfg.Env = append(cfg.Env, p.Value)
		case "hostname", "h":
			cfg.Hostname = p.Value
		case "user", "u":
			cfg.User = p.Value
		case "workdir", "w":
			cfg.WorkingDir = p.Value
		case "memory", "m":
			n, err := strconv.ParseInt(p.Value, 10, 64)
			if err != nil {
				return launchRefusal(fmt.Sprintf("Docker parameter memory=%q: %v (bytes expected)", p.Value, err))
			}
			host.Memory = n
		case "add-host":
			host.ExtraHosts = append(host.ExtraHosts, p.Value)
		case "cap-add":
			host.CapAdd = append(host.CapAdd, p.Value)
		case "cap-drop":
			host.CapDrop = append(host.CapDrop, p.Value)
		default:
			return fmt.Errorf("%w: %w --%s", ErrLaunch, ErrParameter, p.Key)
		}
	}
	return nil
}
