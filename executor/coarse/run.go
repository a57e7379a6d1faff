package coarse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/sirupsen/logrus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"

	"github.com/flint-mesos/flint/executor"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/tlspin"
	"github.com/flint-mesos/flint/proto/flintpb"
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

// Role is the FLINT_ROLE value that makes a Flint binary a coarse-grained
// executor; the root package registers Main under it.
const Role = "coarse-executor"

// Main is the coarse executor role: it runs an executor configured by
// FromEnv, logging to stderr at FLINT_LOG_LEVEL in FLINT_LOG_FORMAT. It
// returns nil when the driver stops the executor or ctx is cancelled.
func Main(ctx context.Context) error {
	cfg, err := FromEnv()
	if err != nil {
		return err
	}
	log, err := newLogger(os.Getenv(EnvLogLevel), os.Getenv(EnvLogFormat), cfg.Token)
	if err != nil {
		return err
	}
	cfg.Logger = log
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
	wait := cfg.RetryMin
	var downSince time.Time
	for {
		deadline := time.Now().Add(cfg.Timeout)
		if !downSince.IsZero() {
			deadline = downSince.Add(cfg.Timeout)
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
		now := time.Now()
		if registered {
			downSince, wait = now, cfg.RetryMin
		} else if downSince.IsZero() {
			downSince = now
		}
		if now.Sub(downSince) >= cfg.Timeout {
			return fmt.Errorf("%w: %s for more than %s: %w", ErrDriverUnreachable, cfg.DriverURL, cfg.Timeout, err)
		}
		c.log.WithError(err).WithField("retry_in", wait).Warn("driver connection lost; reconnecting")
		t := time.NewTimer(min(wait, downSince.Add(cfg.Timeout).Sub(now)))
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, cfg.RetryMax)
	}
}

// session connects, registers and serves one stream. registered reports
// whether the driver accepted the registration.
func (c *client) session(ctx context.Context, deadline time.Time) (registered bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	handshake := time.AfterFunc(time.Until(deadline), cancel)
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
	if err := c.ensureRuntime(answer.Properties); err != nil {
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
// the driver's properties.
func (c *client) ensureRuntime(props map[string]string) error {
	if c.rt != nil {
		return nil
	}
	rc := executor.Config{ExecutorID: c.cfg.ExecutorID, Cores: c.cfg.Cores, Registry: c.cfg.Registry, Now: c.cfg.Now, Logger: c.cfg.Logger}
	var errs []error
	if v := props[PropTaskCPUs]; v != "" {
		n, err := strconv.Atoi(v)
		errs = append(errs, propErr(PropTaskCPUs, v, err))
		rc.TaskCPUs = n
	}
	if v := props[PropMaxResultSize]; v != "" {
		n, err := config.ParseSize(v, config.Byte)
		errs = append(errs, propErr(PropMaxResultSize, v, err))
		rc.MaxResultSize = n
	}
	if v := props[PropMaxDirectResultSize]; v != "" {
		n, err := config.ParseSize(v, config.Byte)
		errs = append(errs, propErr(PropMaxDirectResultSize, v, err))
		rc.MaxDirectResultSize = n
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	rt, err := executor.New(rc, c.report)
	if err != nil {
		return err
	}
	c.rt = rt
	return nil
}

func propErr(key, v string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("coarse: driver property %s=%q: %w", key, v, err)
}

// Properties of RegisteredExecutor the executor reads (sizes in bytes,
// optionally with a unit suffix).
const (
	PropTaskCPUs            = "flint.task.cpus"
	PropMaxResultSize       = "flint.driver.maxResultSize"
	PropMaxDirectResultSize = "flint.task.maxDirectResultSize"
)

func (c *client) closeRuntime() {
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
		return nil, fmt.Errorf("coarse: %s: %w", EnvDriverCert, err)
	}
	return credentials.NewTLS(cfg), nil
}
