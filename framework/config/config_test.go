package config

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func mustLoad(t *testing.T, opts LoadOptions) *Config {
	t.Helper()
	c, err := Load(opts)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return c
}

func TestDefaults(t *testing.T) {
	c := New()
	checks := []struct {
		got, want any
	}{
		{c.String("flint.master"), "embedded"}, {c.Bool("flint.mesos.coarse"), true},
		{c.Size("flint.executor.memory"), int64(1 << 30)}, {c.Int("flint.task.cpus"), 1},
		{c.Int("flint.task.maxFailures"), 4}, {c.Size("flint.task.maxDirectResultSize"), int64(1 << 20)},
		{c.Size("flint.driver.maxResultSize"), int64(1 << 30)}, {c.Duration("flint.locality.wait"), 3 * time.Second},
		{c.Duration("flint.locality.wait.node"), 3 * time.Second}, {c.String("flint.scheduler.mode"), "FIFO"},
		{c.Bool("flint.speculation"), false}, {c.Duration("flint.speculation.interval"), 100 * time.Millisecond},
		{c.Float64("flint.speculation.quantile"), 0.75}, {c.Float64("flint.speculation.multiplier"), 1.5},
		{c.Bool("flint.excludeOnFailure.enabled"), true}, {c.Duration("flint.excludeOnFailure.timeout"), time.Hour},
		{c.Int("flint.excludeOnFailure.task.maxTaskAttemptsPerNode"), 2},
		{c.Duration("flint.scheduler.excludeOnFailure.unschedulableTaskSetTimeout"), 120 * time.Second},
		{c.Int("flint.scheduler.seed"), 0}, {c.String("flint.log.level"), "info"}, {c.String("flint.log.format"), "auto"},
		{c.Bool("flint.ui.showConsoleProgress"), true}, {c.Float64("flint.mesos.mesosExecutor.cores"), 0.1},
		{c.Duration("flint.mesos.rejectOfferDurationForUnmetConstraints"), 120 * time.Second},
		{c.Int("flint.cores.max"), 0}, {c.IsSet("flint.cores.max"), false}, {c.Size("flint.mesos.executor.memoryOverhead"), int64(0)},
		{c.Bool("flint.mesos.checkpoint"), false}, {c.String("flint.executor.uri"), ""},
	}
	for i, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("check %d: got %v (%T), want %v", i, ch.got, ch.got, ch.want)
		}
	}
	if len(c.Prefixed("flint.executorEnv.")) != 0 || len(c.Warnings()) != 0 {
		t.Errorf("New has prefixed entries or warnings")
	}
}

// TestPrecedence sets flint.app.name (and friends) in every layer and removes them top-down.
func TestPrecedence(t *testing.T) {
	file := writeFile(t, "f.yaml", "flint:\n  app:\n    name: file\n  task:\n    cpus: 2\n  executor:\n    memory: 3g\n")
	env := []string{"FLINT_APP_NAME=env", "FLINT_TASK_CPUS=3", "PATH=/bin"}
	conf := []string{"flint.app.name=flag"}
	c := mustLoad(t, LoadOptions{File: file, Environ: env, Conf: conf})
	if got := c.String("flint.app.name"); got != "flag" {
		t.Errorf("flag layer: got %q", got)
	}
	if got := c.Int("flint.task.cpus"); got != 3 {
		t.Errorf("env over file: got %d", got)
	}
	if got := c.Size("flint.executor.memory"); got != 3<<30 {
		t.Errorf("file over default: got %d", got)
	}
	if err := c.Set("flint.app.name", "code"); err != nil {
		t.Fatal(err)
	}
	if got := c.String("flint.app.name"); got != "code" {
		t.Errorf("code layer: got %q", got)
	}
	c = mustLoad(t, LoadOptions{File: file, Environ: env})
	if got := c.String("flint.app.name"); got != "env" {
		t.Errorf("env layer: got %q", got)
	}
	c = mustLoad(t, LoadOptions{File: file})
	if got := c.String("flint.app.name"); got != "file" {
		t.Errorf("file layer: got %q", got)
	}
	if got := mustLoad(t, LoadOptions{}).String("flint.app.name"); got != "flint" {
		t.Errorf("default: got %q", got)
	}
}

func TestInheritedKeys(t *testing.T) {
	c := mustLoad(t, LoadOptions{Conf: []string{"flint.locality.wait=5", "flint.locality.wait.rack=1min", "flint.mesos.rejectOfferDuration=30"}})
	if got := c.Duration("flint.locality.wait.process"); got != 5*time.Second {
		t.Errorf("process inherits: %v", got)
	}
	if got := c.Duration("flint.locality.wait.rack"); got != time.Minute {
		t.Errorf("rack override: %v", got)
	}
	if got := c.Duration("flint.mesos.rejectOfferDurationForReachedMaxCores"); got != 30*time.Second {
		t.Errorf("reject inherits: %v", got)
	}
}

func TestBareNumberUnits(t *testing.T) {
	c := mustLoad(t, LoadOptions{Conf: []string{"flint.executor.memory=2048", "flint.speculation.interval=250",
		"flint.task.maxDirectResultSize=4096", "flint.locality.wait=3"}})
	if got := c.Size("flint.executor.memory"); got != 2048<<20 {
		t.Errorf("memory MiB: %d", got)
	}
	if got := c.Duration("flint.speculation.interval"); got != 250*time.Millisecond {
		t.Errorf("interval ms: %v", got)
	}
	if got := c.Size("flint.task.maxDirectResultSize"); got != 4096 {
		t.Errorf("bytes: %d", got)
	}
	if got := c.Duration("flint.locality.wait"); got != 3*time.Second {
		t.Errorf("seconds: %v", got)
	}
}

var fileFormats = map[string]string{
	"nested.yaml": "flint:\n  executor:\n    memory: 2g\n  executorEnv:\n    MY_Var: fromfile\n  speculation.quantile: 0.9\n  mesos:\n    uris: [a, b]\n",
	"flat.yml":    "flint.executor.memory: 2g\nflint.executorEnv.MY_Var: fromfile\nflint.speculation.quantile: 0.9\nflint.mesos.uris: a,b\n",
	"nested.json": `{"flint": {"executor": {"memory": "2g"}, "executorEnv": {"MY_Var": "fromfile"}, "speculation": {"quantile": 0.9}, "mesos": {"uris": ["a", "b"]}}}`,
	"flat.json":   `{"flint.executor.memory": "2g", "flint.executorEnv.MY_Var": "fromfile", "flint.speculation.quantile": 0.9, "flint.mesos.uris": "a,b"}`,
	"nested.toml": "[flint]\nexecutor.memory = \"2g\"\nspeculation.quantile = 0.9\nmesos.uris = [\"a\", \"b\"]\n[flint.executorEnv]\nMY_Var = \"fromfile\"\n",
	"flat.toml":   "\"flint.executor.memory\" = \"2g\"\n\"flint.executorEnv.MY_Var\" = \"fromfile\"\n\"flint.speculation.quantile\" = 0.9\n\"flint.mesos.uris\" = \"a,b\"\n",
	"a.properties": "# Spark style\nflint.executor.memory=2g\nflint.executorEnv.MY_Var = fromfile\nflint.speculation.quantile: 0.9\n" +
		"flint.mesos.uris a,b\n",
	"flint-defaults.conf": "flint.executor.memory   2g\nflint.executorEnv.MY_Var fromfile\nflint.speculation.quantile 0.9\nflint.mesos.uris a,b\n",
	"UPPER.YAML":          "flint.executor.memory: 2g\nflint.executorEnv.MY_Var: fromfile\nflint.speculation.quantile: 0.9\nflint.mesos.uris: a,b\n",
}

func TestFileFormats(t *testing.T) {
	for name, content := range fileFormats {
		t.Run(name, func(t *testing.T) {
			c := mustLoad(t, LoadOptions{File: writeFile(t, name, content)})
			if got := c.Size("flint.executor.memory"); got != 2<<30 {
				t.Errorf("memory = %d", got)
			}
			if got := c.Float64("flint.speculation.quantile"); got != 0.9 {
				t.Errorf("quantile = %v", got)
			}
			if got := c.String("flint.mesos.uris"); got != "a,b" {
				t.Errorf("uris = %q", got)
			}
			if got := c.Prefixed("flint.executorEnv."); !maps.Equal(got, map[string]string{"MY_Var": "fromfile"}) {
				t.Errorf("executorEnv = %v", got)
			}
			if w := c.Warnings(); len(w) != 0 {
				t.Errorf("warnings: %q", w)
			}
		})
	}
}

func TestFileErrors(t *testing.T) {
	if _, err := Load(LoadOptions{File: writeFile(t, "x.ini", "a=b")}); err == nil || !strings.Contains(err.Error(), "unsupported extension") {
		t.Errorf("ini: %v", err)
	}
	if _, err := Load(LoadOptions{File: filepath.Join(t.TempDir(), "missing.yaml")}); err == nil || !strings.HasPrefix(err.Error(), "config: ") {
		t.Errorf("missing: %v", err)
	}
	p := writeFile(t, "bad.yaml", "flint: [unclosed\n")
	if _, err := Load(LoadOptions{File: p}); err == nil || !strings.Contains(err.Error(), p) {
		t.Errorf("syntax: %v", err)
	}
	p = writeFile(t, "map.yaml", "flint:\n  app:\n    name:\n      x: 1\n")
	if _, err := Load(LoadOptions{File: p}); err != nil {
		t.Errorf("a map under a leaf key is an unknown nested key, not a crash: %v", err)
	} else if c := mustLoad(t, LoadOptions{File: p}); len(c.Warnings()) != 1 {
		t.Errorf("want a warning for flint.app.name.x, got %q", c.Warnings())
	}
}

func TestExecutorEnvCasePreserved(t *testing.T) {
	file := writeFile(t, "f.properties", "flint.executorEnv.FromFile=1\nflint.executorEnv.Shared=file\nflint.EXECUTORENV.odd=2\n")
	c := mustLoad(t, LoadOptions{
		File:    file,
		Environ: []string{"FLINT_EXECUTORENV_From_Env=3", "FLINT_EXECUTORENV_Shared=env", "flint_executorEnv_lower=4"},
		Conf:    []string{"flint.executorEnv.FromFlag=5", "flint.executorEnv.Shared=flag"},
	})
	if err := c.Set("flint.executorEnv.FromCode", "6"); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"FromFile": "1", "odd": "2", "From_Env": "3", "lower": "4", "FromFlag": "5", "FromCode": "6", "Shared": "flag"}
	if got := c.Prefixed("flint.executorEnv."); !maps.Equal(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
	if got := c.Prefixed("flint.executorenv"); !maps.Equal(got, want) {
		t.Errorf("prefix without dot, other case: %v", got)
	}
	if err := c.Set("flint.executorEnv.Shared", "code"); err != nil || c.Prefixed("flint.executorEnv.")["Shared"] != "code" {
		t.Errorf("code layer did not win: %v", err)
	}
}

func TestEnvironmentMapping(t *testing.T) {
	c := mustLoad(t, LoadOptions{Environ: []string{
		"FLINT_EXECUTOR_MEMORY=4g", "FLINT_TASK_MAXFAILURES=8", "flint_mesos_secret_file=/s",
		"FLINT_USER=alice", "FLINT_NO_SUCH=1", "NOTFLINT_APP_NAME=x", "FLINT_", "garbage",
	}})
	if c.Size("flint.executor.memory") != 4<<30 || c.Int("flint.task.maxFailures") != 8 || c.String("flint.mesos.secret.file") != "/s" {
		t.Errorf("env not mapped: %v", c.Redacted())
	}
	// FLINT_USER is not a key but is known; FLINT_NO_SUCH is probably a mistake.
	if w := c.Warnings(); c.String("flint.app.name") != "flint" || len(w) != 1 || w[0] != "config: ignoring environment variable FLINT_NO_SUCH: it names no key" {
		t.Errorf("unrelated variables leaked: %q %q", c.String("flint.app.name"), w)
	}
}

func TestBadValues(t *testing.T) {
	file := writeFile(t, "f.yaml", "flint.task.cpus: many\nflint.speculation.quantile: high\n")
	_, err := Load(LoadOptions{
		File:    file,
		Environ: []string{"FLINT_EXECUTOR_MEMORY=lots"},
		Conf:    []string{"flint.scheduler.mode=RANDOM", "flint.master=yarn", "flint.locality.wait=-1s", "flint.speculation=maybe", "noequals"},
	})
	if err == nil {
		t.Fatal("no error")
	}
	msg := err.Error()
	for _, want := range []string{
		`config: flint.task.cpus = "many" (from config file ` + file + `:1): invalid value: want a whole number`,
		`config: flint.speculation.quantile = "high" (from config file ` + file + `:2): invalid value: want a number`,
		`config: flint.executor.memory = "lots" (from environment variable FLINT_EXECUTOR_MEMORY): invalid value: want a size such as 512m or 2g (bare number in MiB)`,
		`config: flint.scheduler.mode = "RANDOM" (from --conf flint.scheduler.mode): invalid value: want one of FIFO, FAIR`,
		`config: flint.master = "yarn" (from --conf flint.master): invalid value: want a master URL`,
		`config: flint.locality.wait = "-1s" (from --conf flint.locality.wait): invalid value: want a duration`,
		`config: flint.speculation = "maybe" (from --conf flint.speculation): invalid value: want true or false`,
		`config: --conf "noequals": invalid syntax: want key=value`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q:\n%s", want, msg)
		}
	}
	if !errors.Is(err, ErrInvalidValue) || !errors.Is(err, ErrSyntax) {
		t.Errorf("sentinels not wrapped: %v", err)
	}
	for line := range strings.SplitSeq(msg, "\n") {
		if !strings.HasPrefix(line, "config: ") {
			t.Errorf("line without prefix: %q", line)
		}
	}
}

func TestOverriddenBadValueIsFine(t *testing.T) {
	c := mustLoad(t, LoadOptions{Environ: []string{"FLINT_EXECUTOR_MEMORY=lots"}, Conf: []string{"flint.executor.memory=2g"}})
	if c.Size("flint.executor.memory") != 2<<30 {
		t.Error("flag did not override")
	}
}

func TestEnumCaseInsensitive(t *testing.T) {
	c := mustLoad(t, LoadOptions{Conf: []string{"flint.scheduler.mode=fair", "flint.log.level=DEBUG"}})
	if c.String("flint.scheduler.mode") != "FAIR" || c.String("flint.log.level") != "debug" {
		t.Errorf("got %q %q", c.String("flint.scheduler.mode"), c.String("flint.log.level"))
	}
}

func TestUnknownKeyWarnings(t *testing.T) {
	file := writeFile(t, "f.yaml", "other.key: 1\n")
	c := mustLoad(t, LoadOptions{File: file, Conf: []string{"flint.totally.different.thing=1"}})
	w := strings.Join(c.Warnings(), "\n")
	if want := "config: ignoring other.key from config file " + file + ":1: not a flint.* key"; !strings.Contains(w, want) {
		t.Errorf("warnings lack %q:\n%s", want, w)
	}
	if !strings.Contains(w, "flint.totally.different.thing from --conf flint.totally.different.thing\n") && !strings.HasSuffix(w, "flint.totally.different.thing from --conf flint.totally.different.thing") {
		t.Errorf("far-off key should have no suggestion:\n%s", w)
	}
}

// A flint.* key a typo away from a known one, in a --conf flag or a config
// file, is an error naming the key meant (issue 23: a typo ran the job in
// the wrong mode with only a warning); nothing of it is applied.
func TestMisspelledKeyIsAnError(t *testing.T) {
	file := writeFile(t, "f.yaml", "flint:\n  executor:\n    memroy: 2g\n")
	_, err := Load(LoadOptions{File: file, Conf: []string{"flint.executor.mem=1g", "flint.mesos.corse=false"}})
	if !errors.Is(err, ErrMisspelledKey) {
		t.Fatalf("err = %v, want ErrMisspelledKey", err)
	}
	for _, want := range []string{
		"config: flint.executor.memroy (from config file " + file + ":3): misspelled key: did you mean flint.executor.memory?",
		"config: flint.executor.mem (from --conf flint.executor.mem): misspelled key: did you mean flint.executor.memory?",
		"config: flint.mesos.corse (from --conf flint.mesos.corse): misspelled key: did you mean flint.mesos.coarse?",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// LoadOptions.Defaults replace a key's declared default and every layer
// overrides them.
func TestProgramDefaults(t *testing.T) {
	c := mustLoad(t, LoadOptions{Defaults: map[string]string{"flint.app.name": "wordcount"}})
	if got := c.String("flint.app.name"); got != "wordcount" {
		t.Errorf("flint.app.name = %q, want the program's default wordcount", got)
	}
	c = mustLoad(t, LoadOptions{Defaults: map[string]string{"flint.app.name": "wordcount"}, Conf: []string{"flint.app.name=nightly"}})
	if got := c.String("flint.app.name"); got != "nightly" {
		t.Errorf("flint.app.name = %q, want --conf's nightly", got)
	}
	if _, err := Load(LoadOptions{Defaults: map[string]string{"flint.no.such": "x"}}); !errors.Is(err, ErrUnknownKey) {
		t.Errorf("a default for an unknown key: err = %v", err)
	}
}

func TestSet(t *testing.T) {
	c := New()
	if err := c.Set("flint.executor.memory", "2g"); err != nil || c.Size("flint.executor.memory") != 2<<30 {
		t.Fatalf("Set: %v", err)
	}
	err := c.Set("flint.executor.memory", "huge")
	if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), `config: flint.executor.memory = "huge" (from Set)`) {
		t.Errorf("bad value: %v", err)
	}
	if c.Size("flint.executor.memory") != 2<<30 {
		t.Errorf("failed Set changed the value")
	}
	err = c.Set("flint.speculaton", "true")
	if !errors.Is(err, ErrUnknownKey) || !strings.Contains(err.Error(), "did you mean flint.speculation?") {
		t.Errorf("unknown key: %v", err)
	}
	if err := c.Set("flint.cores.max", ""); err != nil || c.IsSet("flint.cores.max") {
		t.Errorf("optional key reset: %v", err)
	}
	if err := c.Set("flint.task.cpus", ""); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("empty value for a key with a default: %v", err)
	}
}

func TestSecretsRedacted(t *testing.T) {
	c := mustLoad(t, LoadOptions{
		Conf:    []string{"flint.mesos.secret=hunter2", "flint.mesos.principal=me"},
		Environ: []string{"FLINT_AUTHENTICATE_SECRET=s3cr3t-0123456789abcdef", "FLINT_EXECUTORENV_HOME=/h"},
	})
	r := c.Redacted()
	if r["flint.mesos.secret"] != Redaction || r["flint.authenticate.secret"] != Redaction {
		t.Errorf("secrets shown: %v", r)
	}
	if r["flint.mesos.principal"] != "me" || r["flint.master"] != "embedded" || r["flint.executorEnv.HOME"] != "/h" {
		t.Errorf("plain values missing: %v", r)
	}
	for k, v := range r {
		if strings.Contains(v, "hunter2") || strings.Contains(v, "s3cr3t") {
			t.Errorf("%s leaks a secret", k)
		}
	}
	if got := c.Secrets(); len(got) != 2 || !strings.Contains(strings.Join(got, ","), "hunter2") {
		t.Errorf("Secrets() = %q", got)
	}
	if _, ok := New().Redacted()["flint.mesos.secret"]; ok {
		t.Errorf("unset secret listed")
	}
}

func TestGetterPanicsOnProgrammerError(t *testing.T) {
	for name, f := range map[string]func(c *Config){
		"unknown":   func(c *Config) { c.String("flint.nope") },
		"wrongKind": func(c *Config) { c.Int("flint.executor.memory") },
		"prefix":    func(c *Config) { c.Prefixed("flint.nope.") },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("no panic")
				}
			}()
			f(New())
		})
	}
}

func TestKeysTable(t *testing.T) {
	seen := map[string]bool{}
	for _, k := range Keys() {
		if seen[strings.ToLower(k.Name)] {
			t.Errorf("duplicate key %s", k.Name)
		}
		seen[strings.ToLower(k.Name)] = true
		if !strings.HasPrefix(k.Name, "flint.") || k.Doc == "" || k.Group == "" {
			t.Errorf("key %s: bad name, doc or group", k.Name)
		}
		if err := k.check(k.Default); err != nil {
			t.Errorf("key %s: default %q invalid: %v", k.Name, k.Default, err)
		}
		if k.Kind == KindSize && k.SizeUnit == 0 || k.Kind == KindDuration && k.DurationUnit == 0 {
			t.Errorf("key %s has no unit for bare numbers", k.Name)
		}
		if k.Inherit != "" && mustKey(k.Inherit).Kind != k.Kind {
			t.Errorf("key %s inherits from a key of another kind", k.Name)
		}
	}
	for _, name := range []string{"flint.mesos.coarse", "flint.mesos.secret.file", "flint.mesos.gpus.max",
		"flint.excludeOnFailure.application.maxFailedExecutorsPerNode", "flint.ui.showConsoleProgress"} {
		if !seen[strings.ToLower(name)] {
			t.Errorf("missing key %s", name)
		}
	}
}

func TestDocsUpToDate(t *testing.T) {
	got, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatalf("reading docs/configuration.md: %v; run: go run ./cmd/flint gen-config-doc", err)
	}
	if string(got) != string(Markdown()) {
		t.Fatal("docs/configuration.md is out of date with the key table; run: go run ./cmd/flint gen-config-doc")
	}
}

// TestLeafAndPrefixKeys covers keys that are both a value and a prefix of other keys
// (flint.speculation and flint.speculation.interval), which only flat files can express.
func TestLeafAndPrefixKeys(t *testing.T) {
	for name, content := range map[string]string{
		"f.yaml":       "flint.speculation: true\nflint.speculation.interval: 1s\nflint.mesos.secret: pw\nflint.mesos.secret.file: /f\n",
		"f.properties": "flint.speculation=true\nflint.speculation.interval=1s\nflint.mesos.secret=pw\nflint.mesos.secret.file=/f\n",
		"f.json":       `{"flint.speculation": true, "flint.speculation.interval": "1s", "flint.mesos.secret": "pw", "flint.mesos.secret.file": "/f"}`,
	} {
		t.Run(name, func(t *testing.T) {
			c := mustLoad(t, LoadOptions{File: writeFile(t, name, content)})
			if !c.Bool("flint.speculation") || c.Duration("flint.speculation.interval") != time.Second {
				t.Errorf("speculation = %v, interval = %v", c.Bool("flint.speculation"), c.Duration("flint.speculation.interval"))
			}
			if c.String("flint.mesos.secret.file") != "/f" || c.Redacted()["flint.mesos.secret"] != Redaction {
				t.Errorf("secret keys: %v", c.Redacted())
			}
		})
	}
	nested := writeFile(t, "n.yaml", "flint:\n  speculation:\n    interval: 2s\n")
	c := mustLoad(t, LoadOptions{File: nested})
	if c.Bool("flint.speculation") || c.Duration("flint.speculation.interval") != 2*time.Second {
		t.Errorf("nested child must not set the parent: %v", c.Redacted())
	}
}

// flint.app.id names a file (the event log) and a URL path segment: an id
// that could leave the event log directory or the history path is refused.
func TestAppIDMustBeAFileAndPathName(t *testing.T) {
	for _, bad := range []string{"../etc", "a/b", ".hidden", "-x", "with space", strings.Repeat("a", 129)} {
		_, err := Load(LoadOptions{Conf: []string{"flint.app.id=" + bad}})
		if !errors.Is(err, ErrInvalidValue) || !strings.Contains(err.Error(), "flint.app.id") {
			t.Errorf("flint.app.id=%q: %v, want an invalid-value error naming the key", bad, err)
		}
	}
	c := mustLoad(t, LoadOptions{Conf: []string{"flint.app.id=driver-20261202-0001-1"}})
	if got := c.String("flint.app.id"); got != "driver-20261202-0001-1" {
		t.Errorf("flint.app.id = %q", got)
	}
}
