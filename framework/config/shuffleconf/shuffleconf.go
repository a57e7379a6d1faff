package shuffleconf

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/shuffle/shuffleblock"
)

// ServiceAPIPrefix starts an agent's shuffle service's own requests
// (shuffle/shuffleservice): POST <prefix><app>/heartbeat keeps the
// application's files, DELETE <prefix><app> removes them.
const ServiceAPIPrefix = "/shuffle-service/v1/apps/"

// AppID is the application's shuffle id: a hash of the secret (not the
// secret), so every executor of the application agrees on it without
// more state.
func AppID(secret string) string {
	sum := sha256.Sum256([]byte("flint shuffle application v1\x00" + secret))
	return "app-" + hex.EncodeToString(sum[:8])
}

// Token is what every executor of the application presents to read
// shuffle blocks: an HMAC-SHA256 of the application id under the
// application secret, so the secret itself never needs to reach them and
// a token is worth nothing to another application.
func Token(secret, appID string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("flint shuffle token v1\x00"))
	m.Write([]byte(appID))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// Memory is an executor's shuffle memory in bytes: flint.shuffle.memory
// when set above 0, else flint.shuffle.memoryFraction of
// flint.executor.memory.
func Memory(c *config.Config) (int64, error) {
	mem := c.Size("flint.shuffle.memory")
	if !c.IsSet("flint.shuffle.memory") || mem <= 0 {
		frac := c.Float64("flint.shuffle.memoryFraction")
		if frac <= 0 || frac > 1 {
			return 0, fmt.Errorf("shuffleenv: flint.shuffle.memoryFraction %v is not in (0, 1]", frac)
		}
		mem = int64(frac * float64(c.Size("flint.executor.memory")))
	}
	return mem, nil
}

// DriverSettings are the shuffle settings a backend sends its executors
// (flintpb.ExecutorSettings.shuffle): the settings of c with the
// application's id and shuffle token (AppID, Token). This is the one place
// they are built; the executor reads them back in shuffle/shuffleenv
// (SettingsFromWire). The token is a secret: the driver sends it only over
// the authenticated driver↔executor channel, and nothing logs it.
func DriverSettings(c *config.Config, secret string) (*flintpb.ShuffleSettings, error) {
	if secret == "" {
		return nil, errors.New("shuffleenv: the application secret is required")
	}
	mem, err := Memory(c)
	if err != nil {
		return nil, err
	}
	comp, err := shuffleblock.ParseCompression(c.String("flint.shuffle.compress.codec"))
	if err != nil {
		return nil, err
	}
	app := AppID(secret)
	s := &flintpb.ShuffleSettings{
		AppId: app, Token: Token(secret, app), Tls: c.Bool("flint.network.tls.enabled"),
		LocalDir: c.String("flint.local.dir"), MemoryBytes: mem, Codec: Codec(comp),
		MaxBytesInFlight: c.Size("flint.reducer.maxSizeInFlight"), MaxReqsInFlight: int32(c.Int("flint.reducer.maxReqsInFlight")),
		MaxRetries:             int32(c.Int("flint.shuffle.io.maxRetries")),
		RetryWaitNanos:         int64(c.Duration("flint.shuffle.io.retryWait")),
		ConnectionTimeoutNanos: int64(c.Duration("flint.shuffle.io.connectionTimeout")),
	}
	if c.Bool("flint.shuffle.service.enabled") {
		dir := c.String("flint.shuffle.service.dir")
		if dir == "" || !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("shuffleenv: flint.shuffle.service.dir %q must be an absolute path (the same on every agent)", dir)
		}
		s.ServiceDir = dir
	}
	return s, nil
}

// Codec is c on the wire.
func Codec(c shuffleblock.Compression) flintpb.ShuffleCodec {
	switch c {
	case shuffleblock.S2:
		return flintpb.ShuffleCodec_SHUFFLE_CODEC_S2
	case shuffleblock.Zstd:
		return flintpb.ShuffleCodec_SHUFFLE_CODEC_ZSTD
	case shuffleblock.None:
		return flintpb.ShuffleCodec_SHUFFLE_CODEC_NONE
	}
	return flintpb.ShuffleCodec_SHUFFLE_CODEC_UNSPECIFIED
}

// Compression is the codec c names; an unspecified or unknown one is an
// error (the driver always names one).
func Compression(c flintpb.ShuffleCodec) (shuffleblock.Compression, error) {
	switch c {
	case flintpb.ShuffleCodec_SHUFFLE_CODEC_S2:
		return shuffleblock.S2, nil
	case flintpb.ShuffleCodec_SHUFFLE_CODEC_ZSTD:
		return shuffleblock.Zstd, nil
	case flintpb.ShuffleCodec_SHUFFLE_CODEC_NONE:
		return shuffleblock.None, nil
	}
	return 0, fmt.Errorf("shuffleconf: shuffle codec %s is not one this executor knows", c)
}
