package logging

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/config"
)

func fakeTerminal(t *testing.T, tty bool) {
	t.Helper()
	old := isTerminal
	isTerminal = func(io.Writer) bool { return tty }
	t.Cleanup(func() { isTerminal = old })
}

func TestTextColoursOnlyOnTerminal(t *testing.T) {
	for _, format := range []string{"", "auto", "text", "TEXT"} {
		for _, tty := range []bool{true, false} {
			fakeTerminal(t, tty)
			var buf bytes.Buffer
			log, err := New(Options{Level: "info", Format: format, Out: &buf})
			if err != nil {
				t.Fatal(err)
			}
			log.WithField("stage", 3).Warn("slow")
			out := buf.String()
			if coloured := strings.Contains(out, "\x1b["); coloured != tty {
				t.Errorf("format %q tty=%v: coloured=%v: %q", format, tty, coloured, out)
			}
			if !strings.Contains(out, "slow") || !strings.Contains(out, "stage") {
				t.Errorf("format %q: %q", format, out)
			}
		}
	}
}

func TestJSON(t *testing.T) {
	fakeTerminal(t, true)
	var buf bytes.Buffer
	log, err := New(Options{Level: "debug", Format: "json", Out: &buf})
	if err != nil {
		t.Fatal(err)
	}
	log.WithField("task", 7).Debug("launched")
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatalf("not JSON: %q: %v", buf.String(), err)
	}
	if m["msg"] != "launched" || m["level"] != "debug" || m["task"] != float64(7) {
		t.Errorf("got %v", m)
	}
}

func TestLevel(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(Options{Level: "warn", Out: &buf})
	if err != nil {
		t.Fatal(err)
	}
	log.Info("hidden")
	log.Warn("shown")
	if strings.Contains(buf.String(), "hidden") || !strings.Contains(buf.String(), "shown") {
		t.Errorf("got %q", buf.String())
	}
	if log, err := New(Options{}); err != nil || log.GetLevel() != logrus.InfoLevel {
		t.Errorf("default level: %v", err)
	}
}

func TestBadOptions(t *testing.T) {
	_, err := New(Options{Level: "loud", Format: "xml"})
	if !errors.Is(err, ErrOption) {
		t.Fatalf("err = %v", err)
	}
	for _, want := range []string{`logging: level "loud": invalid option: want trace, debug`, `logging: format "xml": invalid option: want auto, text or json`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
}

type stringer struct{ s string }

func (s stringer) String() string { return s.s }

func TestRedactHook(t *testing.T) {
	var buf bytes.Buffer
	log, err := New(Options{Format: "json", Out: &buf, Secrets: []string{"hunter2", "", "pw"}})
	if err != nil {
		t.Fatal(err)
	}
	base := log.WithField("static", "kept")
	base.WithFields(logrus.Fields{
		"plain": "x=hunter2;y=pw",
		"err":   fmt.Errorf("auth with hunter2 failed"),
		"str":   stringer{"token pw"},
		"num":   42,
		"st":    struct{ P string }{"hunter2"},
	}).Info("password is hunter2")
	out := buf.String()
	if strings.Contains(out, "hunter2") || strings.Contains(out, "pw") {
		t.Errorf("secret leaked: %s", out)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"msg": "password is *****", "plain": "x=*****;y=*****", "err": "auth with ***** failed",
		"str": "token *****", "num": float64(42), "st": "{P:*****}", "static": "kept"}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("%s = %#v, want %#v", k, m[k], v)
		}
	}
	buf.Reset()
	base.Info("again")
	if !strings.Contains(buf.String(), `"static":"kept"`) {
		t.Errorf("hook modified a shared entry: %s", buf.String())
	}
}

func TestRedactHookNoSecrets(t *testing.T) {
	if h := RedactHook([]string{"", ""}); len(h.secrets) != 0 {
		t.Errorf("empty secrets kept")
	}
	e := &logrus.Entry{Message: "m", Data: logrus.Fields{"a": "b"}}
	if err := RedactHook(nil).Fire(e); err != nil || e.Message != "m" || e.Data["a"] != "b" {
		t.Errorf("changed without secrets: %v", e)
	}
}

func TestFromConfig(t *testing.T) {
	c, err := config.Load(config.LoadOptions{Conf: []string{"flint.log.level=debug", "flint.log.format=json", "flint.mesos.secret=abc"}})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	log, err := New(FromConfig(c, &buf))
	if err != nil {
		t.Fatal(err)
	}
	log.Debugf("secret=%s", "abc")
	if !strings.Contains(buf.String(), `"msg":"secret=*****"`) {
		t.Errorf("got %q", buf.String())
	}
}
