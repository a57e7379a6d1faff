package coarse

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/coarse/gateway"
	"github.com/flint-mesos/flint/framework/backend"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/mesosconn"
	"github.com/flint-mesos/flint/mesosbackend"
)

func testBackend(t *testing.T, conf ...string) *Backend {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Conf: append([]string{"flint.master=mesos://127.0.0.1:5050"}, conf...)})
	if err != nil {
		t.Fatal(err)
	}
	m, _ := backend.ParseMaster("mesos://127.0.0.1:5050")
	log := logrus.New()
	log.SetOutput(io.Discard)
	b, err := NewBackend(backend.Params{Master: m, Config: cfg, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	b.exe = mesosbackend.Executable{URI: "http://driver:1/files/abc/flint", Name: "flint"}
	b.gwURL, b.secret, b.user = "driver:2", "s3cret", "alice"
	b.set.Command = "./flint"
	return b
}

func scalar(name string, v float64) mesos.Resource {
	return mesos.Resource{Name: name, Type: mesos.SCALAR.Enum(), Scalar: &mesos.Value_Scalar{Value: v}}
}

func offer(id, agent string, cpus, mem, gpus float64, attrs ...mesos.Attribute) mesos.Offer {
	rs := mesos.Resources{scalar("cpus", cpus), scalar("mem", mem)}
	if gpus > 0 {
		rs = append(rs, scalar("gpus", gpus))
	}
	return mesos.Offer{ID: mesos.OfferID{Value: id}, AgentID: mesos.AgentID{Value: agent}, Hostname: agent + ".host", Resources: rs, Attributes: attrs}
}

// summary renders a plan as "offer:cores,cores offer:cores | reason:offers".
func summary(b *Backend, p launchPlan) string {
	var parts []string
	for _, id := range p.offers {
		var cs []string
		for _, ti := range p.launches[id] {
			cs = append(cs, fmt.Sprint(b.execs[ti.TaskID.Value].cores))
		}
		parts = append(parts, id.Value+":"+strings.Join(cs, ","))
	}
	for _, r := range []mesosconn.DeclineReason{mesosconn.DeclineUnfit, mesosconn.DeclineNoDemand, mesosconn.DeclineUnmetConstraint, mesosconn.DeclineReachedMaxCores, mesosconn.DeclineShuttingDown} {
		for _, id := range p.declines[r] {
			parts = append(parts, r.String()+":"+id.Value)
		}
	}
	return strings.Join(parts, " ")
}

func TestPlan(t *testing.T) {
	now := time.Unix(1000, 0)
	for _, tc := range []struct {
		name   string
		conf   []string
		offers []mesos.Offer
		want   string
	}{
		{"whole offer per executor", nil,
			[]mesos.Offer{offer("o1", "a1", 4, 4096, 0), offer("o2", "a2", 2.5, 4096, 0)}, "o1:4 o2:2"},
		{"cores max caps the last executor", []string{"flint.cores.max=5"},
			[]mesos.Offer{offer("o1", "a1", 4, 4096, 0), offer("o2", "a2", 4, 4096, 0)}, "o1:4 o2:1"},
		{"executor cores round-robin", []string{"flint.executor.cores=1", "flint.cores.max=3"},
			[]mesos.Offer{offer("o1", "a1", 4, 8192, 0), offer("o2", "a2", 4, 8192, 0)}, "o1:1,1 o2:1"},
		{"memory bounds executors per offer", []string{"flint.executor.cores=1", "flint.executor.memory=1g"},
			[]mesos.Offer{offer("o1", "a1", 4, 3000, 0)}, "o1:1,1"},
		{"too little memory", nil,
			[]mesos.Offer{offer("o1", "a1", 4, 1000, 0)}, "unfit:o1"},
		{"too few cpus for flint.executor.cores", []string{"flint.executor.cores=3"},
			[]mesos.Offer{offer("o1", "a1", 2, 8192, 0)}, "unfit:o1"},
		{"constraints", []string{"flint.mesos.constraints=zone:a"},
			[]mesos.Offer{offer("o1", "a1", 2, 8192, 0, mesos.Attribute{Name: "zone", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: "b"}}),
				offer("o2", "a2", 2, 8192, 0, mesos.Attribute{Name: "zone", Type: mesos.TEXT, Text: &mesos.Value_Text{Value: "a"}})},
			"o2:2 unmet constraints:o1"},
		{"cap reached declines the rest", []string{"flint.cores.max=2"},
			[]mesos.Offer{offer("o1", "a1", 2, 8192, 0), offer("o2", "a2", 2, 8192, 0)}, "o1:2 reached max cores:o2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := testBackend(t, tc.conf...)
			p := b.planOffers(tc.offers, nil, now)
			if got := summary(b, p); got != tc.want {
				t.Fatalf("plan = %q, want %q", got, tc.want)
			}
		})
	}
}

// With fewer executors wanted than offers could hold, the offers from the
// hosts pending tasks prefer get them; offers from elsewhere wait up to
// flint.locality.wait for a preferred host to be offered.
func TestPlanPrefersHostsTasksWant(t *testing.T) {
	now := time.Unix(1000, 0)
	two := []mesos.Offer{offer("o1", "a1", 2, 4096, 0), offer("o2", "a2", 2, 4096, 0)}
	for _, tc := range []struct {
		name  string
		conf  []string
		prefs map[string]int
		at    time.Duration
		want  string
	}{
		{"no preference: offer order", []string{"flint.cores.max=2"}, nil, 0, "o1:2 reached max cores:o2"},
		{"preferred host first", []string{"flint.cores.max=2"}, map[string]int{"a2.host": 3}, 0, "o2:2 reached max cores:o1"},
		{"most preferred first", []string{"flint.cores.max=2"}, map[string]int{"a1.host": 1, "a2.host": 5}, 0, "o2:2 reached max cores:o1"},
		{"executor cores: preferred first per round", []string{"flint.cores.max=3", "flint.executor.cores=1"}, map[string]int{"a2.host": 1}, 0, "o2:1,1 o1:1"},
		{"waits for an unoffered preferred host", []string{"flint.cores.max=2", "flint.locality.wait=3s"}, map[string]int{"a3.host": 1}, 0, "unfit:o1 unfit:o2"},
		{"uncapped: no wait", nil, map[string]int{"a3.host": 1}, 0, "o1:2 o2:2"},
		{"no wait when flint.locality.wait=0", []string{"flint.cores.max=2", "flint.locality.wait=0s"}, map[string]int{"a3.host": 1}, 0, "o1:2 reached max cores:o2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := testBackend(t, tc.conf...)
			if got := summary(b, b.planOffers(two, tc.prefs, now.Add(tc.at))); got != tc.want {
				t.Fatalf("plan = %q, want %q", got, tc.want)
			}
		})
	}

	// The wait ends after flint.locality.wait, counted from the first
	// offer held back.
	b := testBackend(t, "flint.cores.max=2", "flint.locality.wait=3s")
	prefs := map[string]int{"a3.host": 1}
	if got := summary(b, b.planOffers(two, prefs, now)); got != "unfit:o1 unfit:o2" {
		t.Fatalf("at first: plan %q", got)
	}
	if got := summary(b, b.planOffers(two[:1], prefs, now.Add(2*time.Second))); got != "unfit:o1" {
		t.Fatalf("within the wait: plan %q", got)
	}
	if got := summary(b, b.planOffers(two[1:], prefs, now.Add(4*time.Second))); got != "o2:2" {
		t.Fatalf("after the wait: plan %q", got)
	}

	// A requested executor total caps the backend as flint.cores.max does.
	b = testBackend(t, "flint.locality.wait=3s")
	b.limit = 1
	if got := summary(b, b.planOffers(two, map[string]int{"a2.host": 1}, now)); got != "o2:2 no demand:o1" {
		t.Fatalf("limit 1: plan %q", got)
	}
}

func TestPlanGPUsAndTaskInfo(t *testing.T) {
	b := testBackend(t, "flint.mesos.gpus.max=3", "flint.executorEnv.MY_VAR=x", "flint.mesos.uris=http://h/extra.txt")
	p := b.planOffers([]mesos.Offer{offer("o1", "a1", 2, 4096, 2), offer("o2", "a2", 2, 4096, 2)}, nil, time.Unix(0, 0))
	var gpus []int
	for _, id := range p.offers {
		for _, ti := range p.launches[id] {
			gpus = append(gpus, b.execs[ti.TaskID.Value].gpus)
		}
	}
	if fmt.Sprint(gpus) != "[2 1]" {
		t.Fatalf("gpus per executor = %v, want [2 1] (flint.mesos.gpus.max=3)", gpus)
	}
	ti := p.launches[p.offers[0]][0]
	cmd := ti.Command
	if cmd.GetShell() || cmd.GetValue() != "./flint" || len(cmd.URIs) != 2 || !cmd.URIs[0].GetExecutable() || cmd.URIs[0].GetExtract() {
		t.Fatalf("command = %+v", cmd)
	}
	// Every URI names its file: Mesos' fetcher would otherwise keep a query in the name.
	if cmd.URIs[0].GetOutputFile() != "flint" || cmd.URIs[1].GetOutputFile() != "extra.txt" {
		t.Fatalf("output files %q, %q; want flint, extra.txt", cmd.URIs[0].GetOutputFile(), cmd.URIs[1].GetOutputFile())
	}
	env := map[string]string{}
	for _, v := range cmd.Environment.Variables {
		env[v.Name] = v.GetValue()
	}
	for k, want := range map[string]string{"FLINT_ROLE": "coarse-executor", "FLINT_DRIVER_URL": "driver:2", "FLINT_EXECUTOR_ID": ti.TaskID.Value,
		"FLINT_EXECUTOR_CORES": "2", "FLINT_EXECUTOR_TOKEN": gateway.ExecutorToken("s3cret", ti.TaskID.Value), "FLINT_AGENT_ID": "a1", "FLINT_EXECUTOR_HOST": "a1.host", "FLINT_USER": "alice", "MY_VAR": "x", "GOMEMLIMIT": "1024MiB"} {
		if env[k] != want {
			t.Errorf("env %s = %q, want %q", k, env[k], want)
		}
	}
	for _, v := range cmd.Environment.Variables { // the application secret stays in the driver
		if strings.Contains(v.GetValue(), "s3cret") {
			t.Errorf("env %s carries the application secret", v.Name)
		}
	}
	if mem := mesosconn.Scalar(ti.Resources, "mem"); mem != 1408 {
		t.Fatalf("executor mem = %g, want 1408 (1g + 384m overhead)", mem)
	}
}

func TestAgentExclusionExpires(t *testing.T) {
	b := testBackend(t, "flint.mesos.executor.maxFailuresPerAgent=2", "flint.mesos.executor.agentExclusionTimeout=1m")
	now := time.Unix(1000, 0)
	if b.fails.fail("a1", "boom", now) {
		t.Fatal("excluded after one failure")
	}
	if !b.fails.fail("a1", "boom", now) {
		t.Fatal("not excluded after two failures")
	}
	if got := summary(b, b.planOffers([]mesos.Offer{offer("o1", "a1", 2, 4096, 0)}, nil, now.Add(30*time.Second))); got != "unfit:o1" {
		t.Fatalf("excluded agent: plan %q", got)
	}
	if !strings.Contains(b.explain(), "excluded until") {
		t.Fatalf("explanation %q does not mention the exclusion", b.explain())
	}
	if got := summary(b, b.planOffers([]mesos.Offer{offer("o2", "a1", 2, 4096, 0)}, nil, now.Add(61*time.Second))); got != "o2:2" {
		t.Fatalf("after the exclusion expired: plan %q", got)
	}
}

func TestSettingsValidation(t *testing.T) {
	for _, conf := range [][]string{
		{"flint.executor.cores=1", "flint.task.cpus=2"},
		{"flint.executor.cores=4", "flint.cores.max=2"},
		{"flint.mesos.constraints=zone:a:b:c;;"},
		{"flint.executor.uri=http://h/flint.tgz"},
	} {
		cfg, err := config.Load(config.LoadOptions{Conf: conf})
		if err != nil {
			continue // refused by config validation already
		}
		if _, err := readSettings(cfg); err == nil {
			t.Errorf("%v accepted", conf)
		}
	}
}

// WithIDTag gives a successor (flint.mesos.driver.frameworkId) the tag it
// names instead of a random one; a new framework's ids stay plain with it.
func TestWithIDTag(t *testing.T) {
	m, _ := backend.ParseMaster("mesos://127.0.0.1:5050")
	for _, c := range []struct {
		conf   []string
		prefix string
	}{
		{[]string{"flint.mesos.driver.frameworkId=fw-1"}, "d7-"},
		{nil, ""},
	} {
		cfg, err := config.Load(config.LoadOptions{Conf: append([]string{"flint.master=mesos://127.0.0.1:5050"}, c.conf...)})
		if err != nil {
			t.Fatal(err)
		}
		b, err := NewBackend(backend.Params{Master: m, Config: cfg}, WithIDTag("d7"))
		if err != nil {
			t.Fatal(err)
		}
		if b.idPrefix != c.prefix {
			t.Errorf("with %v: executor id prefix %q, want %q", c.conf, b.idPrefix, c.prefix)
		}
	}
}
