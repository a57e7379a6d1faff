package shuffleconf

import (
	"testing"

	"github.com/flint-mesos/flint/framework/config"
)

// DriverProperties writes the configuration's shuffle settings in the
// properties' forms: sizes in bytes, durations in Go's notation, the
// codec lower-cased, the memory from the fraction when flint.shuffle.memory
// is unset.
func TestDriverProperties(t *testing.T) {
	c := config.New()
	for k, v := range map[string]string{
		"flint.executor.memory": "2g", "flint.shuffle.memoryFraction": "0.25", "flint.shuffle.compress.codec": "zstd",
		"flint.reducer.maxSizeInFlight": "48m", "flint.reducer.maxReqsInFlight": "7", "flint.shuffle.io.maxRetries": "5",
		"flint.shuffle.io.retryWait": "3s", "flint.shuffle.io.connectionTimeout": "90s", "flint.local.dir": "/scratch",
		"flint.network.tls.enabled": "true",
	} {
		if err := c.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	p, err := DriverProperties(c, "the application secret")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		PropTLS: "true", PropLocalDir: "/scratch", PropMemory: "536870912", PropCompression: "zstd",
		PropMaxBytesInFlight: "50331648", PropMaxReqsInFlight: "7", PropMaxRetries: "5", PropRetryWait: "3s", PropTimeout: "1m30s",
	}
	for k, v := range want {
		if p[k] != v {
			t.Errorf("%s = %q, want %q", k, p[k], v)
		}
	}
	if p[PropAppID] == "" || p[PropToken] == "" || p[PropAppID] != AppID("the application secret") ||
		p[PropToken] != Token("the application secret", p[PropAppID]) {
		t.Errorf("app id %q and token %q are not the secret's", p[PropAppID], p[PropToken])
	}
	if len(p) != len(want)+2 {
		t.Errorf("%d properties, want %d: %v", len(p), len(want)+2, p)
	}
	if err := c.Set("flint.shuffle.memory", "64m"); err != nil {
		t.Fatal(err)
	}
	if m, err := Memory(c); err != nil || m != 64<<20 {
		t.Errorf("Memory with flint.shuffle.memory=64m = %d, %v; want %d", m, err, 64<<20)
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
func TestDriverPropertiesShuffleService(t *testing.T) {
	props := func(kv ...string) (map[string]string, error) {
		c := config.New()
		for i := 0; i < len(kv); i += 2 {
			if err := c.Set(kv[i], kv[i+1]); err != nil {
				t.Fatal(err)
			}
		}
		return DriverProperties(c, "s")
	}
	p, err := props()
	if _, ok := p[PropServiceDir]; err != nil || ok {
		t.Errorf("service off: %v, dir %q present", err, p[PropServiceDir])
	}
	p, err = props("flint.shuffle.service.enabled", "true")
	if err != nil || p[PropServiceDir] != "/var/lib/flint/shuffle-service" {
		t.Errorf("service on with the default dir: %v, %q", err, p[PropServiceDir])
	}
	_, err = props("flint.shuffle.service.enabled", "true", "flint.shuffle.service.dir", "relative/dir")
	if err == nil || err.Error() != `shuffleenv: flint.shuffle.service.dir "relative/dir" must be an absolute path (the same on every agent)` {
		t.Errorf("relative dir: %v", err)
	}
}
