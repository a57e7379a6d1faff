package shuffleconf

import (
	"reflect"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

// DriverSettings carries the configuration's shuffle settings typed:
// sizes in bytes, durations, the codec, the memory from the fraction when
// flint.shuffle.memory is unset.
func TestDriverSettings(t *testing.T) {
	c := config.New()
	for k, v := range map[string]string{
		"flint.executor.memory": "2g", "flint.shuffle.memoryFraction": "0.25", "flint.shuffle.compress.codec": "ZSTD",
		"flint.reducer.maxSizeInFlight": "48m", "flint.reducer.maxReqsInFlight": "7", "flint.shuffle.io.maxRetries": "5",
		"flint.shuffle.io.retryWait": "3s", "flint.shuffle.io.connectionTimeout": "90s", "flint.local.dir": "/scratch",
		"flint.network.tls.enabled": "true",
	} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	p, err := DriverSettings(c, "the application secret")
	if err != nil {
		t.Fatal(err)
	}
	app := AppID("the application secret")
	want := &flintpb.ShuffleSettings{
		AppId: app, Token: Token("the application secret", app), Tls: true, LocalDir: "/scratch", MemoryBytes: 536870912,
		Codec: flintpb.ShuffleCodec_SHUFFLE_CODEC_ZSTD, MaxBytesInFlight: 50331648, MaxReqsInFlight: 7, MaxRetries: 5,
		RetryWaitNanos: int64(3 * time.Second), ConnectionTimeoutNanos: int64(90 * time.Second),
	}
	if !reflect.DeepEqual(p, want) {
		t.Errorf("DriverSettings = %v\nwant %v", p, want)
	}
	if app == "" || want.Token == "" {
		t.Errorf("app id %q and token %q are empty", app, want.Token)
	}
	if err := c.Set("flint.shuffle.memory", "64m"); err != nil {
		t.Fatal(err)
	}
	if m, err := Memory(c); err != nil || m != 64<<20 {
		t.Errorf("Memory with flint.shuffle.memory=64m = %d, %v; want %d", m, err, 64<<20)
	}
}

// Each codec has its own wire value and comes back as itself; an
// unspecified one is an error.
func TestCodecRoundTrip(t *testing.T) {
	seen := map[flintpb.ShuffleCodec]bool{}
	for _, c := range []shuffleblock.Compression{shuffleblock.S2, shuffleblock.Zstd, shuffleblock.None} {
		w := Codec(c)
		if w == flintpb.ShuffleCodec_SHUFFLE_CODEC_UNSPECIFIED || seen[w] {
			t.Errorf("codec %s on the wire as %s", c, w)
		}
		seen[w] = true
		if back, err := Compression(w); err != nil || back != c {
			t.Errorf("codec %s came back as %s, %v", c, back, err)
		}
	}
	if _, err := Compression(flintpb.ShuffleCodec_SHUFFLE_CODEC_UNSPECIFIED); err == nil {
		t.Error("an unspecified codec was accepted")
	}
}

// Two secrets give two applications, and distinct tokens.
func TestAppIDAndToken(t *testing.T) {
	if AppID("a-secret") == AppID("b-secret") || Token("s", "app") == Token("s", "app2") || Token("s", "app") == Token("s2", "app") {
		t.Fatal("ids or tokens collide")
	}
	if Token("s", "app") != Token("s", "app") {
		t.Fatal("Token is not a function of its inputs")
	}
}

// The shuffle service's directory travels only while the service is
// enabled, and must be absolute (the same path on every agent).
func TestDriverSettingsShuffleService(t *testing.T) {
	props := func(kv ...string) (*flintpb.ShuffleSettings, error) {
		c := config.New()
		for i := 0; i < len(kv); i += 2 {
			if err := c.Set(kv[i], kv[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		return DriverSettings(c, "s")
	}
	p, err := props()
	if err != nil || p.ServiceDir != "" {
		t.Errorf("service off: %v, dir %q present", err, p.GetServiceDir())
	}
	p, err = props("flint.shuffle.service.enabled", "true")
	if err != nil || p.ServiceDir != "/var/lib/flint/shuffle-service" {
		t.Errorf("service on with the default dir: %v, %q", err, p.GetServiceDir())
	}
	_, err = props("flint.shuffle.service.enabled", "true", "flint.shuffle.service.dir", "relative/dir")
	if err == nil || err.Error() != `shuffleenv: flint.shuffle.service.dir "relative/dir" must be an absolute path (the same on every agent)` {
		t.Errorf("relative dir: %v", err)
	}
}
