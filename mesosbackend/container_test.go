package mesosbackend

import (
	"context"
	"flag"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gogo/protobuf/proto"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/internal/testkit/golden"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the golden scripts with the actual output")

// TestContainerGolden builds, from each combination of the container
// keys, what a launch attaches: the ContainerInfo (Mesos' text format),
// the CommandInfo's command and arguments, the task labels and the port
// environment, or the configuration errors. Step:
//
//	coarse|fine ports=P1,P2 key=value …
func TestContainerGolden(t *testing.T) {
	golden.RunDir(t, "testdata/container", *rewrite, func(t *testing.T, _ string) func(golden.Step) []string {
		return func(s golden.Step) []string { return containerStep(t, s) }
	})
}

func containerStep(t *testing.T, s golden.Step) []string {
	mode, args := s.Tokens[0], s.Tokens[1:]
	var ports []uint64
	var conf []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "ports="); ok {
			for p := range strings.SplitSeq(v, ",") {
				n, err := strconv.ParseUint(p, 10, 16)
				if err != nil {
					t.Fatalf("%s: %v", s, err)
				}
				ports = append(ports, n)
			}
			continue
		}
		conf = append(conf, a)
	}
	cfg, err := config.Load(config.LoadOptions{Conf: conf})
	if err != nil {
		return []string{"load: " + err.Error()}
	}
	set, errs := ReadSettings(cfg, mode)
	if len(errs) > 0 {
		var out []string
		for _, e := range errs {
			out = append(out, "error: "+e.Error())
		}
		slices.Sort(out)
		return out
	}
	if set.Command == "" {
		set.Command = "./flint"
	}
	out := []string{fmt.Sprintf("ports %d", set.Ports)}
	if len(ports) != set.Ports {
		t.Fatalf("%s: the plan gives %d ports, the settings ask %d", s, len(ports), set.Ports)
	}
	if ci := set.ContainerInfo(ports); ci != nil {
		out = append(out, "container "+strings.TrimSpace(proto.CompactTextString(ci)))
	} else {
		out = append(out, "container none")
	}
	cmd := set.CommandInfo(nil, set.Command, nil)
	out = append(out, fmt.Sprintf("command %s args=%q", cmd.GetValue(), cmd.Arguments))
	if l := set.TaskLabels(); l != nil {
		out = append(out, "labels "+strings.TrimSpace(proto.CompactTextString(l)))
	}
	env := map[string]string{}
	set.PortEnv(set.Servers, ports, env)
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, "env "+k+"="+env[k])
	}
	return out
}

// TestPortEnvNamesAreTheContract pins the order of the servers' ports
// (the plan's order) to the names executors read.
func TestPortEnvNamesAreTheContract(t *testing.T) {
	if CoarseServers[0].Port != contract.EnvShufflePort || FineServers[0].Port != contract.EnvResultPort || FineServers[1].Port != contract.EnvShufflePort {
		t.Fatalf("servers: coarse %v fine %v", CoarseServers, FineServers)
	}
}

// When the image holds the binary (flint.mesos.executor.home), executors
// run it from there: nothing but flint.mesos.uris is fetched, and the
// SHA-256 check of the driver's own executable still applies.
func TestExecutorHomeFetchesNoBinary(t *testing.T) {
	log := logrus.New()
	log.SetOutput(io.Discard)
	e := readExecutor(t, "flint.mesos.executor.docker.image=img", "flint.mesos.executor.home=/opt/flint", "flint.mesos.uris=http://h/extra.txt")
	var a AddedFiles
	exe, err := a.StartFiles(&e, Addr{Host: "127.0.0.1"}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer a.CloseFiles(context.Background(), log, "test")
	if want := "/opt/flint/" + exe.Name; e.Command != want {
		t.Fatalf("command %q, want %q", e.Command, want)
	}
	uris := exe.URIs("e1", e.ExtraURIs)
	if len(uris) != 1 || uris[0].Value != "http://h/extra.txt" {
		t.Fatalf("fetched %v, want only flint.mesos.uris", uris)
	}
	if e.Env[contract.EnvBinarySHA256] == "" || e.Env[contract.EnvBinarySHA256] != exe.SHA256 {
		t.Fatalf("binary check %q, want the driver executable's %q", e.Env[contract.EnvBinarySHA256], exe.SHA256)
	}
}

// flint.mesos.driver.labels become the framework's labels, beside those
// the connection's options gave.
func TestDriverLabelsAreFrameworkLabels(t *testing.T) {
	mc := mesosconn.Config{Labels: map[string]string{"given": "1"}}
	if err := driverLabels(loadConfig(t, `flint.mesos.driver.labels=team:data,url:http\://x`), &mc); err != nil {
		t.Fatal(err)
	}
	if len(mc.Labels) != 3 || mc.Labels["team"] != "data" || mc.Labels["url"] != "http://x" || mc.Labels["given"] != "1" {
		t.Fatalf("labels %v", mc.Labels)
	}
}
