package dispatcher

import (
	"errors"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

const sha = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func fakeSeal(v string) (string, error) { return "sealed:" + strings.Repeat("x", len(v)), nil }

func TestDecodeCreateRejects(t *testing.T) {
	cases := map[string]struct{ body, want string }{
		"malformed":       {`{"action":"CreateSubmissionRequest",`, "unexpected EOF"},
		"not an object":   {`[1]`, "cannot unmarshal array"},
		"unknown field":   {`{"action":"CreateSubmissionRequest","appResource":"sha256:` + sha + `","colour":"red"}`, `unknown field "colour"`},
		"spark mainClass": {`{"action":"CreateSubmissionRequest","mainClass":"org.Foo"}`, `unknown field "mainClass" (a Flint program has one main; name a bundled example with "example")`},
		"spark props":     {`{"action":"CreateSubmissionRequest","sparkProperties":{}}`, `use "flintProperties"`},
		"wrong action":    {`{"action":"KillSubmissionRequest"}`, `action is "KillSubmissionRequest"`},
		"trailing data":   {`{"action":"CreateSubmissionRequest"} {}`, "data after the JSON object"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := DecodeCreate(strings.NewReader(c.body))
			if !errors.Is(err, ErrBadRequest) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrBadRequest with %q", err, c.want)
			}
		})
	}
}

func TestValidate(t *testing.T) {
	req := CreateRequest{Action: "CreateSubmissionRequest", AppResource: "sha256:" + sha, AppResourceName: "flint",
		Example: "wordcount", AppArgs: []string{"--top", "3", "/in.txt"},
		FlintProperties: map[string]string{"flint.driver.supervise": "true", "flint.driver.cores": "2", "flint.driver.memory": "2g",
			"flint.executor.memory": "512m", "flint.authenticate.secret": "0123456789abcdef-secret", "flint.executorEnv.DB_PASSWORD": "hunter22"},
		EnvironmentVariables: map[string]string{"TZ": "UTC"}}
	s, err := req.Validate(fakeSeal)
	if err != nil {
		t.Fatal(err)
	}
	if !s.Supervise || s.Cores != 2 || s.MemMB != 2048 || s.SHA256 != sha || s.Name != "flint" {
		t.Fatalf("spec %+v", s)
	}
	if len(s.Properties) != 1 || s.Properties["flint.executor.memory"] != "512m" {
		t.Fatalf("properties %v, want only flint.executor.memory (the dispatcher's keys taken, secrets apart)", s.Properties)
	}
	if s.Secrets["flint.authenticate.secret"] != "sealed:xxxxxxxxxxxxxxxxxxxxxxx" || s.Secrets["flint.executorEnv.DB_PASSWORD"] != "sealed:xxxxxxxx" {
		t.Fatalf("secrets %v, want both sealed", s.Secrets)
	}
	sum := s.Summary()
	if sum.Properties["flint.authenticate.secret"] != Redacted || sum.Properties["flint.executorEnv.DB_PASSWORD"] != Redacted {
		t.Fatalf("summary shows %v", sum.Properties)
	}
	args := DriverArgs(s, "mesos://m:5050", "driver-1")
	want := "submit --example wordcount --master mesos://m:5050 --name wordcount (driver-1) --conf flint.executor.memory=512m -- --top 3 /in.txt"
	if got := strings.Join(args, " "); got != want {
		t.Fatalf("driver args\n%s\nwant\n%s", got, want)
	}
}

func TestValidateReportsEveryProblem(t *testing.T) {
	req := CreateRequest{Action: "CreateSubmissionRequest", AppResource: "ftp://x/y", AppResourceSHA256: "abc",
		FlintProperties:      map[string]string{"flint.nosuch": "1", "flint.driver.cores": "-1", "flint.master": "local", "flint.authenticate.secret": "short"},
		EnvironmentVariables: map[string]string{"FLINT_MASTER": "x", "1x": "y"},
		Files: []FileRef{{Resource: "sha256:abc", Name: "ok.txt"}, {Resource: "sha256:" + sha, Name: "../up"},
			{Resource: "sha256:" + sha, Name: "ok.txt"}, {Resource: "sha256:" + sha, Name: LauncherName}}}
	_, err := req.Validate(fakeSeal)
	if !errors.Is(err, ErrBadRequest) {
		t.Fatalf("%v", err)
	}
	for _, want := range []string{`appResource "ftp://x/y"`, `appResourceSha256 "abc"`, "flint.nosuch", "flint.driver.cores",
		"flint.master: the dispatcher sets", "FLINT_MASTER: set Flint's settings", `"1x" is not a variable name`,
		`files[0].resource "sha256:abc"`, `files[1].name "../up": want a plain file name`, `files[2].name "ok.txt": the sandbox already has`,
		`files[3].name "` + LauncherName + `": the sandbox already has`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if strings.Contains(err.Error(), "short") {
		t.Fatalf("the error quotes a secret value:\n%v", err)
	}
}

func TestReason(t *testing.T) {
	msg := func(s string) mesos.TaskStatus { return mesos.TaskStatus{State: mesos.TASK_FAILED.Enum(), Message: &s} }
	cases := []struct {
		st   mesos.TaskStatus
		want string
	}{
		{msg("Command exited with status 80"), "the program is not a Flint program"},
		{msg("Command exited with status 81"), "the fetched program's SHA-256 is not the submitted"},
		{msg("Command exited with status 1"), "the driver exited with status 1 (see its stderr)"},
		{msg("Agent removed"), "Agent removed"},
		{mesos.TaskStatus{State: mesos.TASK_LOST.Enum(), Reason: mesos.REASON_AGENT_REMOVED.Enum()}, "TASK_LOST (REASON_AGENT_REMOVED)"},
	}
	for _, c := range cases {
		if got := Reason(c.st); !strings.HasPrefix(got, c.want) {
			t.Errorf("Reason(%q) = %q, want %q…", c.st.GetMessage(), got, c.want)
		}
	}
}

func TestUnfit(t *testing.T) {
	agents := []AgentCapacity{{CPUs: 2, MemMB: 4096}, {CPUs: 4, MemMB: 1024}}
	if why := Unfit(2, 2048, agents); why != "" {
		t.Fatalf("fits the first agent: %q", why)
	}
	want := "no agent can ever run this driver: it needs 8 cpus and 1024 MB; the largest of the 2 agents has 4 cpus and 1024 MB (lower --driver-cores/--driver-memory)"
	if why := Unfit(8, 1024, agents); why != want {
		t.Fatalf("got %q\nwant %q", why, want)
	}
	if why := Unfit(64, 1, nil); why != "" {
		t.Fatalf("no agents known yet: %q", why)
	}
}
