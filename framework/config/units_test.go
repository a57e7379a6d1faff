package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseSize(t *testing.T) {
	good := []struct {
		in   string
		unit SizeUnit
		want int64
	}{
		{"512m", Byte, 512 << 20}, {"2g", Byte, 2 << 30}, {"1k", Byte, 1024}, {"100b", MiB, 100},
		{"1t", Byte, 1 << 40}, {"1p", Byte, 1 << 50}, {"64MB", Byte, 64 << 20}, {" 3Gb ", Byte, 3 << 30},
		{"2048", MiB, 2048 << 20}, {"1048576", Byte, 1 << 20}, {"0", GiB, 0}, {"4kib", Byte, 4096},
	}
	for _, c := range good {
		got, err := ParseSize(c.in, c.unit)
		if err != nil || got != c.want {
			t.Errorf("ParseSize(%q, %v) = %d, %v; want %d", c.in, c.unit, got, err, c.want)
		}
	}
	for _, in := range []string{"", "m", "1.5g", "-1g", "12q", "1 g", "99999999999999999999", "9000000p", "0x10"} {
		if n, err := ParseSize(in, MiB); err == nil || !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseSize(%q) = %d, %v; want ErrSyntax", in, n, err)
		}
	}
}

func TestParseDuration(t *testing.T) {
	good := []struct {
		in   string
		unit time.Duration
		want time.Duration
	}{
		{"5s", time.Millisecond, 5 * time.Second}, {"100ms", time.Second, 100 * time.Millisecond},
		{"1min", time.Second, time.Minute}, {"2m", time.Second, 2 * time.Minute}, {"2h", time.Second, 2 * time.Hour},
		{"1d", time.Second, 24 * time.Hour}, {"250us", time.Second, 250 * time.Microsecond},
		{"3", time.Second, 3 * time.Second}, {"3", time.Millisecond, 3 * time.Millisecond},
		{"1h30m", time.Second, 90 * time.Minute}, {"1.5s", time.Second, 1500 * time.Millisecond},
		{" 10S ", time.Second, 10 * time.Second}, {"0", time.Second, 0},
	}
	for _, c := range good {
		got, err := ParseDuration(c.in, c.unit)
		if err != nil || got != c.want {
			t.Errorf("ParseDuration(%q, %v) = %v, %v; want %v", c.in, c.unit, got, err, c.want)
		}
	}
	for _, in := range []string{"", "s", "-5s", "5 weeks", "1y", "99999999999999999999d", "3000000d", "abc"} {
		if d, err := ParseDuration(in, time.Second); err == nil || !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseDuration(%q) = %v, %v; want ErrSyntax", in, d, err)
		}
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, n := range []int64{0, 1, 1023, 1024, 384 << 20, 1 << 30, 3 << 40, 5 << 50} {
		if got, err := ParseSize(FormatSize(n), Byte); err != nil || got != n {
			t.Errorf("size %d → %q → %d, %v", n, FormatSize(n), got, err)
		}
	}
	for _, d := range []time.Duration{0, time.Microsecond, 100 * time.Millisecond, 3 * time.Second, 2 * time.Minute, time.Hour, 48 * time.Hour, 1500 * time.Millisecond, 7} {
		if got, err := ParseDuration(FormatDuration(d), time.Second); err != nil || got != d {
			t.Errorf("duration %v → %q → %v, %v", d, FormatDuration(d), got, err)
		}
	}
}

func TestParseConf(t *testing.T) {
	k, v, err := ParseConf("flint.executorEnv.A=b=c")
	if err != nil || k != "flint.executorEnv.A" || v != "b=c" {
		t.Fatalf("got %q %q %v", k, v, err)
	}
	if k, v, err := ParseConf("flint.app.name="); err != nil || k != "flint.app.name" || v != "" {
		t.Fatalf("empty value: %q %q %v", k, v, err)
	}
	for _, in := range []string{"", "novalue", "=x", "a b=c", "\tk=v"} {
		if _, _, err := ParseConf(in); !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseConf(%q) err = %v; want ErrSyntax", in, err)
		}
	}
}

func TestValidateMaster(t *testing.T) {
	for _, m := range []string{"local", "local[4]", "local[*]", "local[2,3]", "local[*,4]", "embedded",
		"mesos://host:5050", "mesos://10.0.0.1:5050", "mesos://[::1]:5050", "mesos://zk://a:2181,b:2181/mesos"} {
		if err := ValidateMaster(m); err != nil {
			t.Errorf("ValidateMaster(%q) = %v", m, err)
		}
	}
	for _, m := range []string{"", "local[0]", "local[]", "local[2,0]", "locall", "yarn", "mesos://host",
		"mesos://host:0", "mesos://:5050", "mesos://zk://a:2181", "mesos://zk://a:2181/", "mesos://zk://a,b:1/m", "spark://h:7077"} {
		if err := ValidateMaster(m); !errors.Is(err, ErrSyntax) {
			t.Errorf("ValidateMaster(%q) = %v; want ErrSyntax", m, err)
		}
	}
}

func TestParseProperties(t *testing.T) {
	in := "# comment\n! also comment\n  flint.app.name = my app  \nflint.master:local[2]\n" +
		"flint.executorEnv.PATH_X /a/b\\\n   /c\nkey\\ with\\=sep = v\\u0041\\t\nempty\n" +
		"flint.mesos.uris=a,\\\n b\r\nlast=1\\"
	got, err := parseProperties(in)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"flint.app.name", "my app  "}, {"flint.master", "local[2]"},
		{"flint.executorEnv.PATH_X", "/a/b/c"}, {"key with=sep", "vA\t"}, {"empty", ""},
		{"flint.mesos.uris", "a,b"}, {"last", "1"}}
	if len(got) != len(want) {
		t.Fatalf("got %q want %q", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("pair %d: got %q want %q", i, got[i], want[i])
		}
	}
	if _, err := parseProperties("k=\\u00zz"); !errors.Is(err, ErrSyntax) {
		t.Errorf("bad escape: %v", err)
	}
}

func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"512m", "2g", "1k", "100b", "1t", "64MB", "2048", "", "1.5g", "-1", "99999999999999999999p"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := ParseSize(s, MiB)
		if err != nil {
			return
		}
		if n < 0 {
			t.Fatalf("ParseSize(%q) = %d < 0", s, n)
		}
		if back, err := ParseSize(FormatSize(n), Byte); err != nil || back != n {
			t.Fatalf("round trip of %q: %d → %q → %d, %v", s, n, FormatSize(n), back, err)
		}
	})
}

func FuzzParseDuration(f *testing.F) {
	for _, s := range []string{"5s", "100ms", "1min", "2h", "1d", "3", "1h30m", "1.5s", "-1s", "", "9999999999d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDuration(s, time.Second)
		if err != nil {
			return
		}
		if d < 0 {
			t.Fatalf("ParseDuration(%q) = %v < 0", s, d)
		}
		if back, err := ParseDuration(FormatDuration(d), time.Second); err != nil || back != d {
			t.Fatalf("round trip of %q: %v → %q → %v, %v", s, d, FormatDuration(d), back, err)
		}
	})
}

func FuzzConfFlag(f *testing.F) {
	for _, s := range []string{"flint.executor.memory=2g", "flint.executorEnv.A=b=c", "=", "x", "a b=c", "k=\\u0041"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if k, v, err := ParseConf(s); err == nil {
			if k+"="+v != s || k == "" {
				t.Fatalf("ParseConf(%q) = %q, %q", s, k, v)
			}
			// A valid flag either sets a key or becomes a warning; Load must not panic.
			if _, err := Load(LoadOptions{Conf: []string{s}}); err != nil && !strings.HasPrefix(err.Error(), "config: ") {
				t.Fatalf("Load error without prefix: %v", err)
			}
		}
		pairs, err := parseProperties(s)
		if err != nil {
			return
		}
		for _, p := range pairs {
			if strings.ContainsAny(p[0], "\n") && !strings.Contains(s, `\n`) {
				t.Fatalf("key %q has a newline not escaped in %q", p[0], s)
			}
		}
	})
}
