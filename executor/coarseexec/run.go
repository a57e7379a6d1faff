package coarseexec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/executor/files"
	"github.com/flint-mesos/flint/framework/config/jobconf"
	"github.com/flint-mesos/flint/framework/stagetask"
	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/internal/localip"
	"github.com/flint-mesos/flint/proto/flintpb"
	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// Sentinel errors; test with errors.Is.
var (
	// ErrDriverUnreachable: the driver could not be reached for longer than
	// Config.Timeout.
	ErrDriverUnreachable = errors.New("coarse: driver unreachable")
	// ErrRefused: the driver refused the executor for good (wrong token,
	// invalid registration).
	ErrRefused = errors.New("coarse: driver refused the executor")
)

// errStopped ends a session when the driver sent StopExecutor.
var errStopped = errors.New("coarse: stopped by the driver")

// Main is the coarse executor role: it runs an executor configured by
// FromEnv, logging to stderr at FLINT_LOG_LEVEL in FLINT_LOG_FORMAT. It
// returns nil when the driver stops the executor or ctx is cancelled.
func Main(ctx context.Context) error {
	if err := executor.VerifySelf(); err != nil {
		return err
	}
	cfg, err := FromEnv()
	if err != nil {
		return err
	}
	log, err := newLogger(os.Getenv(contract.EnvLogLevel), os.Getenv(contract.EnvLogFormat), cfg.Token)
	if err != nil {
		return err
	}
	cfg.Logger = log
	release, err := executor.HoldHeapFloor(log)
	if err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	defer release()
	err = Run(ctx, cfg)
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// Run runs an executor until the driver stops it (nil), ctx ends (ctx's
// error), the driver refuses it (ErrRefused) or stays unreachable longer
// than cfg.Timeout (ErrDriverUnreachable). Running tasks are killed and
// the runtime closed before Run returns.
func Run(ctx context.Context, cfg Config) error {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return err
	}
	creds, err := transport(cfg.DriverCertSHA256)
	if err != nil {
		return err
	}
	cc, err := grpc.NewClient(cfg.DriverURL,
		grpc.WithTransportCredentials(creds),
		grpc.WithDefaultCallOptions(grpc.ForceCodec(flintpb.Codec{}),
			grpc.MaxCallRecvMsgSize(cfg.MaxMessageSize), grpc.MaxCallSendMsgSize(cfg.MaxMessageSize)),
		grpc.WithConnectParams(grpc.ConnectParams{
			Backoff:           backoff.Config{BaseDelay: cfg.RetryMin, Multiplier: 1.6, Jitter: 0.2, MaxDelay: cfg.RetryMax},
			MinConnectTimeout: min(cfg.Timeout, 20*time.Second),
		}),
		// Detects a driver whose host vanished without closing the connection.
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 10 * time.Second, Timeout: min(max(cfg.Timeout/3, time.Second), 20*time.Second), PermitWithoutStream: true}),
	)
	if err != nil {
		return fmt.Errorf("coarse: driver address %q: %w", cfg.DriverURL, err)
	}
	defer cc.Close()
	c := newClient(cfg, flintpb.NewExecutorGatewayClient(cc))
	err = c.loop(ctx)
	c.closeRuntime()
	return err
}

// loop runs sessions, reconnecting with backoff, until one ends for good.
func (c *client) loop(ctx context.Context) error {
	cfg := c.cfg
	clk := cfg.Clock
	wait := cfg.RetryMin
	var downSince time.Time
	// Until the driver has accepted the executor once, a shorter limit
	// holds: a driver never reached is most likely gone already (killed
	// before its executors started), not briefly away.
	limit, ever := min(cfg.Timeout, cfg.FirstTimeout), false
	for {
		deadline := clk.Now().Add(limit)
		if !downSince.IsZero() {
			deadline = downSince.Add(limit)
		}
		registered, err := c.session(ctx, deadline)
		switch {
		case errors.Is(err, errStopped):
			c.log.Info("executor stopped by the driver")
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, ErrRefused):
			return err
		}
		now := clk.Now()
		if registered {
			downSince, wait = now, cfg.RetryMin
			limit, ever = cfg.Timeout, true
		} else if downSince.IsZero() {
			downSince = now
		}
		if now.Sub(downSince) >= limit {
			if !ever {
				return fmt.Errorf("%w: %s for more than %s, never reached: %w", ErrDriverUnreachable, cfg.DriverURL, limit, err)
			}
			return fmt.Errorf("%w: %s for more than %s: %w", ErrDriverUnreachable, cfg.DriverURL, limit, err)
		}
		c.log.WithError(err).WithField("retry_in", wait).Warn("driver connection lost; reconnecting")
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-clk.After(min(wait, downSince.Add(limit).Sub(now))):
		}
		wait = min(2*wait, cfg.RetryMax)
	}
}

// session connects, registers and serves one stream. registered reports
// whether the driver accepted the registration.
func (c *client) session(ctx context.Context, deadline time.Time) (registered bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	handshake := c.cfg.Clock.AfterFunc(deadline.Sub(c.cfg.Clock.Now()), cancel)
	stream, err := c.api.Connect(sctx)
	if err != nil {
		handshake.Stop()
		return false, classify(err)
	}
	reg := &flintpb.RegisterExecutor{ExecutorId: c.cfg.ExecutorID, Host: c.cfg.Host, AgentId: c.cfg.AgentID,
		Cores: int32(c.cfg.Cores), Token: c.cfg.Token, Version: c.cfg.Version, Pid: int32(os.Getpid()), Batching: true}
	if err := stream.Send(&flintpb.ExecutorMessage{Message: &flintpb.ExecutorMessage_Register{Register: reg}}); err != nil {
		handshake.Stop()
		_, rerr := stream.Recv() // the status says why
		return false, classify(errors.Join(err, rerr))
	}
	first, err := stream.Recv()
	if !handshake.Stop() {
		return false, fmt.Errorf("coarse: no registration answer before the deadline: %w", classify(err))
	}
	if err != nil {
		return false, classify(err)
	}
	answer := first.GetRegistered()
	if answer == nil {
		return false, fmt.Errorf("coarse: the driver's first message is %T, not RegisteredExecutor", first.Message)
	}
	if err := c.ensureRuntime(answer.Settings); err != nil {
		return true, fmt.Errorf("%w: %w", ErrRefused, err)
	}
	c.log.WithFields(logrus.Fields{"driver": c.cfg.DriverURL, "driver_id": answer.DriverId}).Info("registered with the driver")
	return true, c.serve(sctx, cancel, stream, time.Duration(answer.HeartbeatIntervalNanos), answer.Batching)
}

// classify marks refusals that retrying cannot cure.
func classify(err error) error {
	if err == nil {
		return errors.New("coarse: stream ended")
	}
	switch status.Code(err) {
	case codes.Unauthenticated, codes.PermissionDenied, codes.InvalidArgument:
		return fmt.Errorf("%w: %s", ErrRefused, status.Convert(err).Message())
	}
	return err
}

// ensureRuntime creates the runtime on the first registration, sized by
// the driver's settings.
func (c *client) ensureRuntime(set *flintpb.ExecutorSettings) error {
	if c.rt != nil {
		return nil
	}
	if err := flintpb.CheckSettingsVersion(set); err != nil {
		return fmt.Errorf("coarse: %w", err)
	}
	rc := executor.Config{ExecutorID: c.cfg.ExecutorID, Cores: c.cfg.Cores, Registry: c.cfg.Registry, Now: c.cfg.Now, Logger: c.cfg.Logger,
		FilesDir: files.SandboxDir(), TaskCPUs: int(set.TaskCpus), MaxResultSize: set.MaxResultSize, MaxDirectResultSize: set.MaxDirectResultSize}
	var errs []error
	shuffleSet, withShuffle, err := shuffleenv.SettingsFromWire(set.Shuffle, c.cfg.ExecutorID, c.cfg.Host)
	errs = append(errs, err)
	job, err := jobconf.Properties{Settings: set.JobSettings, Secrets: set.JobSecrets}.Config()
	errs = append(errs, err)
	rc.Job = job
	if err := errors.Join(errs...); err != nil {
		return err
	}
	if withShuffle {
		// Listen where the driver is reachable from; report the host.
		if h, _, err := net.SplitHostPort(strings.TrimPrefix(c.cfg.DriverURL, "grpc://")); err == nil {
			shuffleSet.Bind = localip.TowardsOrEmpty(h)
		}
		if c.cfg.ShufflePort > 0 { // in a container: the mapped port
			shuffleSet.Port, shuffleSet.HostPort = c.cfg.ShufflePort, c.cfg.ShuffleHostPort
			shuffleSet.Bind = cmpOr(c.cfg.BindAddress, shuffleSet.Bind)
		}
		if env, err := shuffleenv.Start(shuffleSet, true, c.log); err != nil {
			// Tasks that shuffle fail (no shuffle in their context);
			// the others run.
			c.log.WithError(err).Error("cannot start the executor's shuffle")
		} else {
			c.shuffle = env
			// the application's runtime state on this executor, handed
			// to every task; closed before the shuffle
			c.env = stagetask.NewEnv(env)
			base := stagetask.NewContext(context.Background(), c.env)
			rc.BaseContext = func() context.Context { return base }
			c.log.WithField("address", env.Location().Address).Info("serving shuffle outputs")
		}
	}
	jobconf.LogEffective(c.log, job)
	rt, err := executor.New(rc, c.report)
	if err != nil {
		c.closeShuffle()
		return err
	}
	c.rt = rt
	return nil
}

// closeShuffle stops serving shuffle outputs and deletes them: the
// executor is exiting, and the driver forgets its outputs with it.
func (c *client) closeShuffle() {
	if c.env != nil {
		if err := c.env.Close(); err != nil {
			c.log.WithError(err).Warn("releasing the application's state")
		}
		c.env = nil
	}
	if c.shuffle == nil {
		return
	}
	if err := c.shuffle.Close(); err != nil {
		c.log.WithError(err).Warn("removing shuffle files")
	}
	c.shuffle = nil
}

func (c *client) closeRuntime() {
	defer c.closeShuffle()
	if c.rt == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.ShutdownTimeout)
	defer cancel()
	if err := c.rt.Close(ctx); err != nil {
		c.log.WithError(err).Warn("tasks did not stop in time")
	}
}

// transport is plaintext, or TLS accepting only the driver certificate
// pinned by its SHA-256.
func transport(pin string) (credentials.TransportCredentials, error) {
	if pin == "" {
		return insecure.NewCredentials(), nil
	}
	cfg, err := tlspin.Client(pin)
	if err != nil {
		return nil, fmt.Errorf("coarse: %s: %w", contract.EnvDriverCert, err)
	}
	return credentials.NewTLS(cfg), nil
}
