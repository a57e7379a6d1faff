package s3

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/storage"
)

func init() {
	for _, s := range []string{"s3", "s3a", "s3n"} {
		storage.Register(s, open)
	}
	storage.RegisterExecutorSecrets("s3", storage.ExecutorSecrets{Keys: credentialKeys, Env: executorEnv})
}

// credentialKeys hold the static credentials; their values reach executors only as Mesos
// secrets (executorEnv), never with the job's settings.
var credentialKeys = []string{
	"flint.s3.accessKey", "flint.s3.accessKey.file",
	"flint.s3.secretKey", "flint.s3.secretKey.file",
	"flint.s3.sessionToken", "flint.s3.sessionToken.file",
}

// executorEnv is the static credentials of cfg (the .file variants read on the driver) as the
// standard AWS variables, which the AWS chain of an executor's client reads first; nothing
// when cfg sets none (executors then use their own environment's chain).
func executorEnv(cfg *config.Config) (map[string]string, error) {
	o, err := OptionsFrom(cfg)
	if err != nil || o.AccessKey == "" {
		return nil, err
	}
	env := map[string]string{"AWS_ACCESS_KEY_ID": o.AccessKey, "AWS_SECRET_ACCESS_KEY": o.SecretKey}
	if o.SessionToken != "" {
		env["AWS_SESSION_TOKEN"] = o.SessionToken
	}
	return env, nil
}

// Options configure an FS. The zero value means AWS S3 with the AWS chain's credentials
// and region.
type Options struct {
	Endpoint  string // flint.s3.endpoint
	Region    string // flint.s3.region; "" = the AWS chain's, else us-east-1
	PathStyle bool   // flint.s3.pathStyleAccess
	// Static credentials (flint.s3.accessKey, .secretKey, .sessionToken); empty: the AWS chain.
	AccessKey, SecretKey, SessionToken string

	ConnectTimeout, RequestTimeout time.Duration
	MaxAttempts                    int
	MaxBackoff                     time.Duration
	PartSize                       int64
	// Dial replaces the network dialer (tests: send every host to a loopback server).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
}

// OptionsFrom reads Options from cfg (nil: defaults), the .file variants of the credentials
// read from the files they name.
func OptionsFrom(cfg *config.Config) (Options, error) {
	if cfg == nil {
		cfg = config.New()
	}
	o := Options{
		Endpoint: cfg.String("flint.s3.endpoint"), Region: cfg.String("flint.s3.region"),
		PathStyle:      cfg.Bool("flint.s3.pathStyleAccess"),
		ConnectTimeout: cfg.Duration("flint.s3.connectTimeout"), RequestTimeout: cfg.Duration("flint.s3.requestTimeout"),
		MaxAttempts: cfg.Int("flint.s3.maxAttempts"), MaxBackoff: cfg.Duration("flint.s3.maxBackoff"),
		PartSize: cfg.Size("flint.s3.multipart.size"),
	}
	var errs []error
	for _, c := range []struct {
		key string
		to  *string
	}{{"flint.s3.accessKey", &o.AccessKey}, {"flint.s3.secretKey", &o.SecretKey}, {"flint.s3.sessionToken", &o.SessionToken}} {
		v, err := secretValue(cfg, c.key)
		errs = append(errs, err)
		*c.to = v
	}
	if (o.AccessKey == "") != (o.SecretKey == "") {
		errs = append(errs, errors.New("storage: s3: set both flint.s3.accessKey and flint.s3.secretKey (or their .file variants), or neither to use the AWS credential chain"))
	}
	if o.SessionToken != "" && o.AccessKey == "" {
		errs = append(errs, errors.New("storage: s3: flint.s3.sessionToken needs flint.s3.accessKey and flint.s3.secretKey"))
	}
	return o, errors.Join(errs...)
}

// secretValue is key's value, or the content of the file key.file names.
func secretValue(cfg *config.Config, key string) (string, error) {
	v, file := cfg.String(key), cfg.String(key+".file")
	switch {
	case file == "":
		return v, nil
	case v != "":
		return "", fmt.Errorf("storage: s3: set %s or %s.file, not both", key, key)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		// The error names the file, never its content.
		return "", fmt.Errorf("storage: s3: %s.file: %w", key, err)
	}
	return strings.TrimRight(string(b), "\r\n"), nil
}

var (
	cacheMu sync.Mutex
	cache   = map[[32]byte]*FS{}
)

// open is the Opener every s3 scheme registers: one FS per distinct Options, kept for the
// process's life (clients hold connection pools).
func open(ctx context.Context, cfg *config.Config) (storage.FS, error) {
	o, err := OptionsFrom(cfg)
	if err != nil {
		return nil, err
	}
	key := sha256.Sum256(fmt.Appendf(nil, "%q", []any{o.Endpoint, o.Region, o.PathStyle, o.AccessKey, o.SecretKey, o.SessionToken,
		o.ConnectTimeout, o.RequestTimeout, o.MaxAttempts, o.MaxBackoff, o.PartSize}))
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if fs := cache[key]; fs != nil {
		return fs, nil
	}
	fs, err := New(ctx, o)
	if err != nil {
		return nil, err
	}
	cache[key] = fs
	return fs, nil
}

// New makes an FS from o.
func New(ctx context.Context, o Options) (*FS, error) {
	if o.PartSize == 0 {
		o.PartSize = 32 << 20
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = 5
	}
	if o.MaxBackoff == 0 {
		o.MaxBackoff = 20 * time.Second
	}
	loads := []func(*awsconfig.LoadOptions) error{
		awsconfig.WithHTTPClient(awshttp.NewBuildableClient()),
		awsconfig.WithRetryer(func() aws.Retryer {
			return retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = o.MaxAttempts
				so.MaxBackoff = o.MaxBackoff
			})
		}),
		awsconfig.WithRequestChecksumCalculation(aws.RequestChecksumCalculationWhenRequired),
		awsconfig.WithResponseChecksumValidation(aws.ResponseChecksumValidationWhenRequired),
	}
	if o.Region != "" {
		loads = append(loads, awsconfig.WithRegion(o.Region))
	}
	if o.AccessKey != "" {
		loads = append(loads, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(o.AccessKey, o.SecretKey, o.SessionToken)))
	}
	ac, err := awsconfig.LoadDefaultConfig(ctx, loads...)
	if err != nil {
		return nil, fmt.Errorf("storage: s3: AWS configuration: %w", err)
	}
	hc := httpClient(ac.HTTPClient, o)
	ac.HTTPClient = hc
	if ac.Region == "" {
		ac.Region = "us-east-1"
	}
	client := s3.NewFromConfig(ac, func(so *s3.Options) {
		if o.Endpoint != "" {
			so.BaseEndpoint = aws.String(o.Endpoint)
		}
		so.UsePathStyle = o.PathStyle
	})
	return &FS{client: client, http: hc, partSize: o.PartSize, maxAttempts: o.MaxAttempts, maxBackoff: o.MaxBackoff}, nil
}

// httpClient is the client requests go through: the SDK's transport (with the custom CA
// bundle AWS_CA_BUNDLE or the profile names, when any) in a client of our own, so that its
// idle connections can be closed. ConnectTimeout bounds a dial; RequestTimeout bounds every
// wait for data from the server — the first byte of an answer and each read of a body — so
// a stalled server fails the attempt, which the retryer repeats.
func httpClient(sdk aws.HTTPClient, o Options) *http.Client {
	var tr *http.Transport
	if bc, ok := sdk.(*awshttp.BuildableClient); ok {
		tr = bc.GetTransport()
	} else {
		tr = http.DefaultTransport.(*http.Transport).Clone()
	}
	dial := o.Dial
	if dial == nil {
		dial = (&net.Dialer{Timeout: o.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	}
	tr.DialContext = dial
	if o.RequestTimeout > 0 {
		tr.ResponseHeaderTimeout = o.RequestTimeout
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dial(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &idleConn{Conn: c, timeout: o.RequestTimeout}, nil
		}
	}
	tr.MaxIdleConnsPerHost = 64
	return &http.Client{Transport: tr}
}

// idleConn fails a read that waits more than timeout for data.
type idleConn struct {
	net.Conn
	timeout time.Duration
}

func (c *idleConn) Read(b []byte) (int, error) {
	c.Conn.SetReadDeadline(time.Now().Add(c.timeout))
	return c.Conn.Read(b)
}

// CloseIdleConnections closes the idle connections of every FS the registered schemes made
// (tests end with no connection goroutine left).
func CloseIdleConnections() {
	cacheMu.Lock()
	defer cacheMu.Unlock()
	for _, fs := range cache {
		fs.http.CloseIdleConnections()
	}
}
