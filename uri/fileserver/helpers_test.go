package fileserver

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// uriOpt sets an optional CommandInfo.URI field.
type uriOpt func(*mesos.CommandInfo_URI)

func executable() uriOpt { return func(u *mesos.CommandInfo_URI) { t := true; u.Executable = &t } }
func cached() uriOpt     { return func(u *mesos.CommandInfo_URI) { t := true; u.Cache = &t } }
func output(s string) uriOpt {
	return func(u *mesos.CommandInfo_URI) { u.OutputFile = &s }
}

func mkURI(value string, opts ...uriOpt) mesos.CommandInfo_URI {
	u := mesos.CommandInfo_URI{Value: value}
	for _, o := range opts {
		o(&u)
	}
	return u
}

func writeTemp(t testing.TB, dir, name string, b []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func errContains(t testing.TB, err error, parts ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("want error containing %q, got nil", parts)
	}
	for _, p := range parts {
		if !strings.Contains(err.Error(), p) {
			t.Errorf("error %q does not contain %q", err, p)
		}
	}
}

func readString(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func perm(t testing.TB, path string) fs.FileMode {
	t.Helper()
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}
