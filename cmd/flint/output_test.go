package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestDefaultOutputIsQuiet: a job on the embedded master prints, at the
// default level, what a user needs and nothing else: the web UI, the
// master used, the framework id, one line per executor, the progress and
// the result.
func TestDefaultOutputIsQuiet(t *testing.T) {
	out, errOut, code := runFlint(t, "submit", "--example", "pi", "--conf", "flint.embedded.workDir="+t.TempDir(), "20", "1000")
	if code != 0 || !strings.HasPrefix(out, "Pi is roughly ") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	allowed := []*regexp.Regexp{
		regexp.MustCompile(`msg="web UI at `),
		regexp.MustCompile(`msg="embedded: started the embedded Mesos master at http://127\.0\.0\.1:\d+ with 2 agents \(`),
		regexp.MustCompile(`msg="coarse: registered with the Mesos master at \S+:\d+ as framework \S+-0000"`),
		regexp.MustCompile(`msg="executor [01] added on \S+ with \d+ cores?"`),
		regexp.MustCompile(`^Stage 0 \(pi\): `), // progress lines (stderr is not a terminal)
	}
	executors := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		ok := false
		for _, a := range allowed {
			ok = ok || a.MatchString(l)
		}
		if !ok {
			t.Errorf("unexpected line at the default level: %s", l)
		}
		if m := regexp.MustCompile(`executor (\d+) added on`).FindStringSubmatch(l); m != nil {
			executors[m[1]]++
		}
	}
	// Two executors start; a fast job may end before the second registers.
	if len(executors) == 0 {
		t.Errorf("no executor line:\n%s", errOut)
	}
	for id, n := range executors {
		if n != 1 {
			t.Errorf("executor %s has %d lines, want one:\n%s", id, n, errOut)
		}
	}
	if m := regexp.MustCompile(`\b1 (cpus|cores|tasks|times|agents)\b`).FindString(errOut); m != "" {
		t.Errorf("bad plural %q in:\n%s", m, errOut)
	}
}

// TestJSONLogsArePureJSON: with --log-format json every stderr line is a
// JSON object, the final error included.
func TestJSONLogsArePureJSON(t *testing.T) {
	_, job := ownJob(t)
	runs := [][]string{
		{"submit", "--example", "pi", "--log-format", "json", "--conf", "flint.embedded.workDir=" + t.TempDir(), "10", "1000"},
		{"submit", "--master", "local[2]", "--log-format", "json", job, "error"},
		{"submit", "--example", "wordcount", "--log-format", "json", "/no/such/file"},
	}
	for _, args := range runs {
		_, errOut, code := runFlint(t, args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		for _, l := range lines {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Errorf("flint %v (exit %d): not a JSON line: %q", args, code, l)
			}
		}
		if code != 0 {
			var last map[string]any
			_ = json.Unmarshal([]byte(lines[len(lines)-1]), &last)
			if last["level"] != "error" || last["exit_code"] != float64(code) {
				t.Errorf("flint %v: exit %d, last line %q; want the error as JSON with its exit code", args, code, lines[len(lines)-1])
			}
		}
	}
}
