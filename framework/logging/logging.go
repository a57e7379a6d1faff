package logging

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/sirupsen/logrus"
	"golang.org/x/term"

	"github.com/flint-mesos/flint/framework/config"
)

// ErrOption is wrapped by errors for a bad level or format.
var ErrOption = errors.New("invalid option")

// Formats accepted by Options.Format.
const (
	FormatAuto = "auto" // text; coloured only on a terminal
	FormatText = "text" // text; coloured on a terminal
	FormatJSON = "json" // one JSON object per line
)

// Options configure New.
type Options struct {
	Level  string    // trace, debug, info (""), warn, error, fatal or panic
	Format string    // auto (""), text or json
	Out    io.Writer // nil means os.Stderr
	// Secrets are redacted from every message and field (see RedactHook).
	Secrets []string
}

// FromConfig returns Options for out from flint.log.level, flint.log.format and the values of
// the configuration's secret keys.
func FromConfig(c *config.Config, out io.Writer) Options {
	return Options{Level: c.String("flint.log.level"), Format: c.String("flint.log.format"), Out: out, Secrets: c.Secrets()}
}

// isTerminal reports whether w is a terminal; tests replace it.
var isTerminal = func(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// New returns a logger writing to opts.Out at opts.Level in opts.Format.
func New(opts Options) (*logrus.Logger, error) {
	out := opts.Out
	if out == nil {
		out = os.Stderr
	}
	var errs []error
	level := logrus.InfoLevel
	if opts.Level != "" {
		l, err := logrus.ParseLevel(strings.TrimSpace(opts.Level))
		if err != nil {
			errs = append(errs, fmt.Errorf("logging: level %q: %w: want trace, debug, info, warn, error, fatal or panic", opts.Level, ErrOption))
		}
		level = l
	}
	var formatter logrus.Formatter
	switch strings.ToLower(strings.TrimSpace(opts.Format)) {
	case "", FormatAuto, FormatText:
		tty := isTerminal(out)
		formatter = &logrus.TextFormatter{ForceColors: tty, DisableColors: !tty, FullTimestamp: true}
	case FormatJSON:
		formatter = &logrus.JSONFormatter{}
	default:
		errs = append(errs, fmt.Errorf("logging: format %q: %w: want auto, text or json", opts.Format, ErrOption))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	log := logrus.New()
	log.SetOutput(out)
	log.SetLevel(level)
	log.SetFormatter(formatter)
	if h := RedactHook(opts.Secrets); len(h.secrets) > 0 {
		log.AddHook(h)
	}
	return log, nil
}

// Redacted replaces secrets in log output.
const Redacted = config.Redaction

// Hook is the logrus hook returned by RedactHook.
type Hook struct {
	secrets []string // non-empty, longest first
}

// RedactHook returns a hook that replaces every occurrence of the given secret strings in an
// entry's message and field values with "*****". Empty secrets are ignored. Field values that
// are not strings (errors, Stringers, numbers, structs) are rendered to text when they contain a
// secret.
func RedactHook(secrets []string) *Hook {
	h := &Hook{}
	for _, s := range secrets {
		if s != "" {
			h.secrets = append(h.secrets, s)
		}
	}
	sort.Slice(h.secrets, func(i, j int) bool { return len(h.secrets[i]) > len(h.secrets[j]) })
	return h
}

var _ logrus.Hook = (*Hook)(nil)

// Levels returns every level.
func (h *Hook) Levels() []logrus.Level { return logrus.AllLevels }

// Fire redacts the entry in place (logrus hands each hook a private copy of the fields).
func (h *Hook) Fire(e *logrus.Entry) error {
	e.Message = h.redact(e.Message)
	for k, v := range e.Data {
		var s string
		switch x := v.(type) {
		case string:
			if r := h.redact(x); r != x {
				e.Data[k] = r
			}
			continue
		case error:
			s = x.Error()
		case fmt.Stringer:
			s = x.String()
		default:
			s = fmt.Sprintf("%+v", v)
		}
		if r := h.redact(s); r != s {
			e.Data[k] = r
		}
	}
	return nil
}

func (h *Hook) redact(s string) string {
	for _, secret := range h.secrets {
		if strings.Contains(s, secret) {
			s = strings.ReplaceAll(s, secret, Redacted)
		}
	}
	return s
}
