package main

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/eventlog"
	"github.com/flint-mesos/flint/framework/uistore"
)

// lineOf is the first line of the file at path containing s, read here so
// that expected names do not come from the code under test.
func lineOf(t *testing.T, path, s string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), s) {
			return n
		}
	}
	t.Fatalf("%s has no line with %q", path, s)
	return 0
}

// The history list names an application by --name, else by the program
// (the example's name); REST stages carry their own call sites: the map
// stage the flatMap whose records it writes to reduceByKey's shuffle (as
// Spark names a map stage by its last RDD), the result stages their
// actions (issue 23, item 5).
func TestAppAndStagesAreNamedInTheHistory(t *testing.T) {
	logs := t.TempDir()
	in := filepath.Join(t.TempDir(), "in.txt")
	if err := os.WriteFile(in, []byte(strings.Repeat("to be or not to be\n", 20)), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(extra ...string) {
		args := append([]string{"submit", "--example", "wordcount", "--master", "local[2]",
			"--conf", "flint.eventLog.enabled=true", "--conf", "flint.eventLog.dir=" + logs, "--conf", "flint.ui.enabled=false"}, extra...)
		args = append(args, "--", "--output", filepath.Join(t.TempDir(), "out"), in)
		if _, errOut, code := runFlint(t, args...); code != 0 {
			t.Fatalf("wordcount exited %d:\n%s", code, errOut)
		}
	}
	run("--name", "nightly counts")
	run()
	apps, err := eventlog.Apps(logs)
	if err != nil || len(apps) != 2 {
		t.Fatalf("event logs %v, %v", apps, err)
	}
	url, token := historyServer(t, logs)
	var infos []uistore.ApplicationInfo
	getWith(t, url+"/api/v1/applications", token, &infos)
	var got []string
	for _, a := range infos {
		got = append(got, a.Name)
	}
	slices.Sort(got)
	if want := []string{"nightly counts", "wordcount"}; !slices.Equal(got, want) {
		t.Fatalf("applications are named %q, want %q", got, want)
	}
	if _, body := getWith(t, url+"/", token, nil); !strings.Contains(body, "nightly counts") || !strings.Contains(body, ">wordcount<") {
		t.Errorf("the history list does not show both names:\n%s", body)
	}

	src := "../../examples/wordcount/wordcount.go"
	at := func(op, code string) string {
		return fmt.Sprintf("%s at wordcount/wordcount.go:%d", op, lineOf(t, src, code))
	}
	var stages []uistore.StageData
	getWith(t, url+"/api/v1/applications/"+infos[0].ID+"/stages", token, &stages)
	var names []string
	for _, s := range stages {
		names = append(names, s.Name)
	}
	slices.Sort(names)
	names = slices.Compact(names)
	want := []string{at("collect", "dataset.Collect(tops)"), at("flatMap", "dataset.FlatMap(lines"),
		at("saveAsTextFile", "dataset.SaveAsTextFile(lines")}
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("stages are named %q, want %q", names, want)
	}
}
