package config

import (
	"strings"
	"testing"
)

// TestOutOfRangeValuesAreRefusedAtLoad covers values that parse but make no
// sense: each is refused by Load, naming the key, the value and its source.
func TestOutOfRangeValuesAreRefusedAtLoad(t *testing.T) {
	cases := []struct {
		opts LoadOptions
		want string
	}{
		{LoadOptions{Conf: []string{"flint.cores.max=-1"}}, `config: flint.cores.max = "-1" (from --conf flint.cores.max): invalid value: want a whole number ≥ 1`},
		{LoadOptions{Conf: []string{"flint.task.cpus=0"}}, `config: flint.task.cpus = "0" (from --conf flint.task.cpus): invalid value: want a whole number ≥ 1`},
		{LoadOptions{Environ: []string{"FLINT_EXECUTOR_MEMORY=0"}}, `config: flint.executor.memory = "0" (from environment variable FLINT_EXECUTOR_MEMORY): invalid value: want a size such as 512m or 2g (bare number in MiB) ≥ 1`},
		{LoadOptions{Conf: []string{"flint.driver.port=70000"}}, `config: flint.driver.port = "70000" (from --conf flint.driver.port): invalid value: want a whole number from 0 to 65535`},
		{LoadOptions{Flags: []FlagValue{{Flag: "--master", Key: "flint.master", Value: "yarn"}}}, `config: flint.master = "yarn" (from --master flag): invalid value: want a master URL`},
	}
	for _, c := range cases {
		_, err := Load(c.opts)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Count(err.Error(), "\n") != 0 {
			t.Errorf("Load(%+v) = %v\nwant one error starting %q", c.opts, err, c.want)
		}
	}
	if _, err := Load(LoadOptions{Conf: []string{"flint.cores.max=1", "flint.task.cpus=1", "flint.executor.memory=1"}}); err != nil {
		t.Errorf("the lowest allowed values are refused: %v", err)
	}
}

func TestFileValueErrorsNameTheLine(t *testing.T) {
	cases := []struct{ name, content, want string }{
		{"c.yaml", "flint:\n  app:\n    name: x\n  task:\n    cpus: 0\n", ":5): invalid value"},
		{"c.toml", "[flint.app]\nname = \"x\"\n\n[flint.task]\ncpus = 0\n", ":5): invalid value"},
		{"c.properties", "# comment\nflint.app.name=x\n\nflint.task.cpus=0\n", ":4): invalid value"},
	}
	for _, c := range cases {
		p := writeFile(t, c.name, c.content)
		_, err := Load(LoadOptions{File: p})
		want := `config: flint.task.cpus = "0" (from config file ` + p + c.want
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s: %v\nwant prefix %q", c.name, err, want)
		}
	}
}

func TestFileSyntaxErrorsNameTheLine(t *testing.T) {
	cases := []struct{ name, content, want string }{
		// yaml.v3 blames the line where the flow began (3, "executor:"); the mistake is on 5.
		{"s.yaml", "flint:\n  task:\n    cpus: 2\n  executor:\n    memory: [1\n", "yaml: line 5: did not find expected ',' or ']'"},
		{"s.yaml", "flint:\n  task:\n\tcpus: 2\n", "yaml: line 3: found character that cannot start any token"},
		{"s.toml", "[flint.task]\ncpus = 2\nmaxFailures = = 3\n", "line 3, column 15: toml: "},
		{"s.json", "{\"flint\": {\n \"task\": {\"cpus\": 2,}}}", "line 2, column 21: invalid character '}'"},
	}
	for _, c := range cases {
		p := writeFile(t, c.name, c.content)
		_, err := Load(LoadOptions{File: p})
		want := "config: file " + p + ": " + c.want
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v\nwant prefix %q", c.content, err, want)
		}
	}
}

func TestTypoedEnvironmentVariableIsWarned(t *testing.T) {
	c := mustLoad(t, LoadOptions{Environ: []string{"FLINT_EXECUTR_MEMORY=2g", "FLINT_ROLE=x", "FLINT_USER=u", "FLINT_TEST_MARK=1", "FLINTY=1", "PATH=/bin"}})
	want := []string{"config: ignoring environment variable FLINT_EXECUTR_MEMORY: it names no key; did you mean FLINT_EXECUTOR_MEMORY (flint.executor.memory)?"}
	if got := c.Warnings(); len(got) != 1 || got[0] != want[0] {
		t.Errorf("warnings %q, want %q", got, want)
	}
	if c.Size("flint.executor.memory") != 1<<30 {
		t.Errorf("the typo set flint.executor.memory")
	}
}

// FuzzLoadFile feeds arbitrary files of every format to Load: it returns a
// Config or one error prefixed "config: ", never panics, and a position it
// reports lies inside the file.
func FuzzLoadFile(f *testing.F) {
	f.Add("yaml", "flint:\n  task:\n    cpus: 2\n  executor:\n    memory: [1\n")
	f.Add("toml", "[flint.task]\ncpus = 2\nmaxFailures = = 3\n")
	f.Add("json", "{\"flint\": {\"task\": {\"cpus\": 2,}}}")
	f.Add("properties", "flint.task.cpus=0\n")
	f.Fuzz(func(t *testing.T, format, content string) {
		if _, ok := formats[format]; !ok {
			return
		}
		_, err := Load(LoadOptions{File: writeFile(t, "f."+format, content)})
		if err != nil && !strings.HasPrefix(err.Error(), "config: ") {
			t.Fatalf("error without prefix: %v", err)
		}
		if err == nil {
			return
		}
		if _, line, ok := yamlErrorLine(errorsAfterFile(err)); ok && line > strings.Count(content, "\n")+1 {
			t.Fatalf("line %d beyond the file's %d lines: %v", line, strings.Count(content, "\n")+1, err)
		}
	})
}

// errorsAfterFile strips "config: file PATH: " from a file error.
func errorsAfterFile(err error) error {
	_, rest, ok := strings.Cut(err.Error(), ".yaml: ")
	if !ok {
		return err
	}
	return stringError(rest)
}

type stringError string

func (e stringError) Error() string { return string(e) }

func TestRulesBetweenKeysAreCheckedAtLoad(t *testing.T) {
	_, err := Load(LoadOptions{Conf: []string{"flint.network.timeout=3s"}})
	want := `config: flint.executor.heartbeatInterval = "10s" (from default) must be shorter than flint.network.timeout = "3s" (from --conf flint.network.timeout): invalid value`
	if err == nil || err.Error() != want {
		t.Fatalf("Load = %v\nwant %s", err, want)
	}
}

// TestFineCoresMaxBelowOneTaskIsRefusedAtLoad: in fine-grained Mesos mode
// flint.cores.max must hold one task and its executor's own cores; Load
// refuses less, naming each value and where it came from, on every Mesos
// master (a local master runs no Mesos executor and accepts it).
func TestFineCoresMaxBelowOneTaskIsRefusedAtLoad(t *testing.T) {
	p := writeFile(t, "f.properties", "flint.mesos.coarse=false\nflint.cores.max=2\n")
	for _, master := range []string{"embedded", "mesos://127.0.0.1:5050"} {
		_, err := Load(LoadOptions{File: p, Environ: []string{"FLINT_TASK_CPUS=2"},
			Flags: []FlagValue{{Flag: "--master", Key: "flint.master", Value: master}}})
		want := `config: flint.cores.max = "2" (from config file ` + p + `:2) must be at least flint.task.cpus = "2" (from environment variable FLINT_TASK_CPUS) + ` +
			`flint.mesos.mesosExecutor.cores = "0.1" (from default) in fine-grained Mesos mode (flint.mesos.coarse=false), or no task could ever run: invalid value`
		if err == nil || err.Error() != want {
			t.Errorf("--master %s: Load = %v\nwant %s", master, err, want)
		}
	}
	ok := []LoadOptions{
		{File: p, Environ: []string{"FLINT_TASK_CPUS=2"}, Conf: []string{"flint.master=local[2]"}},                                      // no Mesos executor
		{File: p, Environ: []string{"FLINT_TASK_CPUS=2"}, Conf: []string{"flint.mesos.coarse=true"}},                                    // coarse: no executor cores
		{File: p, Environ: []string{"FLINT_TASK_CPUS=1"}, Conf: []string{"flint.mesos.mesosExecutor.cores=1"}},                          // 1 + 1 = 2 fits exactly
		{File: p, Environ: []string{"FLINT_TASK_CPUS=2"}, Conf: []string{"flint.mesos.mesosExecutor.cores=0", "flint.master=embedded"}}, // 2 + 0
	}
	for _, o := range ok {
		if _, err := Load(o); err != nil {
			t.Errorf("Load(%+v) = %v, want it accepted", o, err)
		}
	}
}
