package shuffleconf

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/flint-mesos/flint/framework/config"
)

// Properties an executor's launch settings carry for its shuffle (the
// coarse RegisteredExecutor properties, the fine executor's settings).
// PropToken is a secret: the driver sends it only over the authenticated
// driver↔executor channel, and nothing logs it.
const (
	PropAppID            = "flint.shuffle.appId"
	PropToken            = "flint.shuffle.token"
	PropTLS              = "flint.network.tls.enabled"
	PropLocalDir         = "flint.local.dir"
	PropMemory           = "flint.shuffle.memory"
	PropCompression      = "flint.shuffle.compress.codec"
	PropMaxBytesInFlight = "flint.reducer.maxSizeInFlight"
	PropMaxReqsInFlight  = "flint.reducer.maxReqsInFlight"
	PropMaxRetries       = "flint.shuffle.io.maxRetries"
	PropRetryWait        = "flint.shuffle.io.retryWait"
	PropTimeout          = "flint.shuffle.io.connectionTimeout"
	// PropServiceDir is the agent's shuffle service directory when
	// flint.shuffle.service.enabled is set; absent otherwise.
	PropServiceDir = "flint.shuffle.service.dir"
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

// DriverProperties are the shuffle properties a backend sends its
// executors: the settings of c with the application's id and shuffle
// token (AppID, Token) — sizes in bytes, durations in Go's notation; the
// executor's identity and host are its own.
func DriverProperties(c *config.Config, secret string) (map[string]string, error) {
	if secret == "" {
		return nil, errors.New("shuffleenv: the application secret is required")
	}
	mem, err := Memory(c)
	if err != nil {
		return nil, err
	}
	comp := strings.ToLower(c.String("flint.shuffle.compress.codec"))
	switch comp {
	case "":
		comp = "s2"
	case "s2", "zstd", "none":
	default:
		return nil, fmt.Errorf("shuffleblock: unknown compression codec %q (want s2, zstd or none)", comp)
	}
	app := AppID(secret)
	props := map[string]string{
		PropAppID: app, PropToken: Token(secret, app), PropTLS: strconv.FormatBool(c.Bool("flint.network.tls.enabled")),
		PropLocalDir: c.String("flint.local.dir"), PropMemory: strconv.FormatInt(mem, 10), PropCompression: comp,
		PropMaxBytesInFlight: strconv.FormatInt(c.Size("flint.reducer.maxSizeInFlight"), 10),
		PropMaxReqsInFlight:  strconv.Itoa(c.Int("flint.reducer.maxReqsInFlight")),
		PropMaxRetries:       strconv.Itoa(c.Int("flint.shuffle.io.maxRetries")),
		PropRetryWait:        c.Duration("flint.shuffle.io.retryWait").String(),
		PropTimeout:          c.Duration("flint.shuffle.io.connectionTimeout").String(),
	}
	if c.Bool("flint.shuffle.service.enabled") {
		dir := c.String("flint.shuffle.service.dir")
		if dir == "" || !filepath.IsAbs(dir) {
			return nil, fmt.Errorf("shuffleenv: flint.shuffle.service.dir %q must be an absolute path (the same on every agent)", dir)
		}
		props[PropServiceDir] = dir
	}
	return props, nil
}
