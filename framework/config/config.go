package config

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/viper"

	"github.com/flint-mesos/flint/contract"
	"github.com/flint-mesos/flint/internal/redact"
)

// Sentinel errors wrapped by validation errors.
var (
	ErrUnknownKey   = errors.New("unknown key")
	ErrInvalidValue = errors.New("invalid value")
)

// Redaction replaces secret values in Redacted and in logs.
const Redaction = redact.Mask

// Layer is where a value came from. Later layers override earlier ones.
type Layer int

// Configuration layers, lowest precedence first.
const (
	LayerDefault Layer = iota
	LayerFile
	LayerEnv
	LayerFlag
	LayerCode
)

// String names the layer as error messages show it.
func (l Layer) String() string {
	switch l {
	case LayerDefault:
		return "default"
	case LayerFile:
		return "config file"
	case LayerEnv:
		return "environment"
	case LayerFlag:
		return "--conf flag"
	case LayerCode:
		return "Set"
	}
	return "layer " + strconv.Itoa(int(l))
}

// setting is one value of the environment, flag or code layer.
type setting struct {
	name   string // as given (prefix keys keep the suffix's case)
	value  string
	source string // e.g. "environment variable FLINT_EXECUTOR_MEMORY"
}

// Config is Flint's configuration (Spark's SparkConf): every key declared in the table of Keys,
// layered defaults < config file < environment < --conf flags < Set. A Config is safe for
// concurrent use.
type Config struct {
	mu          sync.RWMutex
	v           *viper.Viper // defaults and config file
	file        string
	fileEntries []fileEntry
	over        [3]map[string]setting // env, flag, code; keyed by canonical name
	warnings    []string
	defaults    map[string]string // the program's own defaults (LoadOptions.Defaults)

	reMu  sync.Mutex // guards the compiled flint.redaction.regex
	re    *regexp.Regexp
	reSrc string
}

// New returns a Config holding only the defaults.
func New() *Config {
	c := &Config{v: viper.New()}
	c.setDefaults(c.v)
	for i := range c.over {
		c.over[i] = map[string]setting{}
	}
	return c
}

func (c *Config) setDefaults(v *viper.Viper) {
	for i := range table {
		if k := &table[i]; !k.Prefix && k.Default != "" {
			v.SetDefault(k.Name, k.Default)
		}
	}
}

// canonical is the map key of a setting: the lower-cased declared name, plus the suffix with its
// case kept for prefix keys.
func canonical(k *Key, suffix string) string {
	return strings.ToLower(k.Name) + suffix
}

// LoadOptions are the sources Load reads, besides the defaults.
type LoadOptions struct {
	File    string   // config file (.yaml, .yml, .toml, .json, .properties, .conf); "" for none
	Environ []string // "NAME=value" entries, usually os.Environ(); FLINT_* ones are read
	Conf    []string // --conf arguments, "key=value"
	// Flags are command-line flags that set one key each (--master sets
	// flint.master); errors name the flag. They override Conf.
	Flags []FlagValue
	// Defaults replace declared keys' defaults for this program (the
	// driver's flint.app.name is its program's name); every layer
	// overrides them.
	Defaults map[string]string
}

// FlagValue is a command-line flag's value for one key.
type FlagValue struct {
	Flag  string // e.g. "--master"
	Key   string
	Value string
}

// Load builds a Config from defaults, opts.File, opts.Environ and opts.Conf, and validates every
// effective value. The error joins every problem found; each names the key, the value, the
// layer it came from and what is expected.
func Load(opts LoadOptions) (*Config, error) {
	c := New()
	var errs []error
	for name, v := range opts.Defaults {
		k, suffix := lookupKey(name)
		if k == nil || suffix != "" {
			errs = append(errs, fmt.Errorf("config: default for %s: %w", name, ErrUnknownKey))
			continue
		}
		if c.defaults == nil {
			c.defaults = map[string]string{}
		}
		c.defaults[canonical(k, "")] = v
	}
	if opts.File != "" {
		if err := c.readFile(opts.File); err != nil {
			return nil, err
		}
	}
	for _, e := range c.fileEntries {
		c.noteFileKey(e)
		if err := typo(e.name, c.fileSource(e.name)); err != nil {
			errs = append(errs, err)
		}
	}
	c.loadEnv(opts.Environ)
	for _, arg := range opts.Conf {
		key, value, err := ParseConf(arg)
		if err != nil {
			errs = append(errs, fmt.Errorf("config: %w", err))
			continue
		}
		if err := typo(key, "--conf "+key); err != nil {
			errs = append(errs, err)
			continue
		}
		c.put(LayerFlag, key, value, "--conf "+key)
	}
	for _, f := range opts.Flags {
		c.put(LayerFlag, f.Key, f.Value, f.Flag+" flag")
	}
	errs = append(errs, c.validate()...)
	c.warnDeprecated()
	if len(errs) == 0 {
		errs = c.crossCheck()
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// noteFileKey records warnings for keys of the file that Flint does not know.
func (c *Config) noteFileKey(e fileEntry) {
	if k, _ := lookupKey(e.name); k == nil {
		c.warnUnknown(e.name, c.fileSource(e.name))
	}
}

// ErrMisspelledKey: a flint.* key given in a --conf flag or a config
// file names no key but is a small edit away from one with as many
// segments: a typo that would
// otherwise run the job in the wrong mode (unknown keys further from any
// key only warn).
var ErrMisspelledKey = errors.New("misspelled key")

// typo is ErrMisspelledKey, with the key meant, when name is an unknown
// flint.* key close to a known one.
func typo(name, source string) error {
	if k, _ := lookupKey(name); k != nil || !strings.HasPrefix(strings.ToLower(name), "flint.") {
		return nil
	}
	s := suggest(name)
	// a key one segment off (flint.app.name.x) is not a typo of it
	if s == "" || strings.Count(s, ".") != strings.Count(name, ".") {
		return nil
	}
	return fmt.Errorf("config: %s (from %s): %w: did you mean %s? (a key under flint. that Flint does not know only warns when no key is this close)",
		name, source, ErrMisspelledKey, s)
}

func (c *Config) warnUnknown(name, source string) {
	if !strings.HasPrefix(strings.ToLower(name), "flint.") {
		c.warnings = append(c.warnings, fmt.Sprintf("config: ignoring %s from %s: not a flint.* key", name, source))
		return
	}
	msg := fmt.Sprintf("config: ignoring unknown key %s from %s", name, source)
	if s := suggest(name); s != "" {
		msg += "; did you mean " + s + "?"
	}
	c.warnings = append(c.warnings, msg)
}

// warnDeprecated warns of every deprecated key set, naming its
// replacement.
func (c *Config) warnDeprecated() {
	for i := range table {
		k := &table[i]
		if k.Deprecated == "" {
			continue
		}
		if v, source, err := c.effective(k); err == nil && v != "" {
			c.warnings = append(c.warnings, fmt.Sprintf("config: %s (from %s) is deprecated: use %s, which overrides it when set", k.Name, source, k.Deprecated))
		}
	}
}

// NonKeyEnv are the FLINT_* environment variables that are not configuration keys: the ones the
// driver sets for executors (their role, identity, where the driver is) and the user name tasks
// see. Load ignores them; any other FLINT_* variable that names no key gets a warning.
// (FLINT_EXECUTOR_CORES, FLINT_NETWORK_TIMEOUT and FLINT_LOG_* name keys too.)
var NonKeyEnv = []string{contract.EnvRole, contract.EnvUser, contract.EnvDriverURL, contract.EnvExecutorID, contract.EnvToken,
	contract.EnvDriverCert, contract.EnvHost, contract.EnvAgentID}

// loadEnv reads FLINT_* variables: FLINT_EXECUTOR_MEMORY → flint.executor.memory (matched
// case-insensitively against declared keys, '_' for '.'), FLINT_EXECUTORENV_MY_VAR →
// flint.executorEnv.MY_VAR. NonKeyEnv and FLINT_TEST_* are ignored; other FLINT_* variables
// are warned about, with the closest key's variable when one is close.
func (c *Config) loadEnv(environ []string) {
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(name) <= len("FLINT_") || !strings.EqualFold(name[:len("FLINT_")], "FLINT_") {
			continue
		}
		if key := envKey(name); key != "" {
			c.put(LayerEnv, key, value, "environment variable "+name)
			continue
		}
		if slices.Contains(NonKeyEnv, strings.ToUpper(name)) || strings.HasPrefix(strings.ToUpper(name), "FLINT_TEST_") {
			continue
		}
		msg := fmt.Sprintf("config: ignoring environment variable %s: it names no key", name)
		if s := suggest(strings.ReplaceAll(name, "_", ".")); s != "" && !strings.HasSuffix(s, "NAME") {
			msg += fmt.Sprintf("; did you mean %s (%s)?", EnvName(s), s)
		}
		c.warnings = append(c.warnings, msg)
	}
}

// EnvName is the environment variable that sets key: flint.executor.memory → FLINT_EXECUTOR_MEMORY.
func EnvName(key string) string {
	return strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// envKey maps an environment variable name to a key name, or "" when it names no key.
func envKey(name string) string {
	for _, p := range prefixes {
		envPrefix := strings.ToUpper(strings.ReplaceAll(p.Name, ".", "_"))
		if len(name) > len(envPrefix) && strings.EqualFold(name[:len(envPrefix)], envPrefix) {
			return p.Name + name[len(envPrefix):]
		}
	}
	if k := byLower[strings.ToLower(strings.ReplaceAll(name, "_", "."))]; k != nil {
		return k.Name
	}
	return ""
}

// put stores a value in the environment, flag or code layer; unknown keys become warnings.
func (c *Config) put(l Layer, name, value, source string) {
	k, suffix := lookupKey(name)
	if k == nil {
		c.warnUnknown(name, source)
		return
	}
	c.over[l-LayerEnv][canonical(k, suffix)] = setting{name: name, value: value, source: source}
}

// Set stores value for key in the code layer, the highest. It rejects unknown keys and invalid
// values, leaving the Config unchanged.
func (c *Config) Set(key, value string) error {
	k, suffix := lookupKey(key)
	if k == nil {
		msg := fmt.Errorf("config: %s: %w", key, ErrUnknownKey)
		if s := suggest(key); s != "" {
			msg = fmt.Errorf("%w; did you mean %s?", msg, s)
		}
		return msg
	}
	if err := k.check(value); err != nil {
		return invalid(k.Name+suffix, value, "Set", k)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.over[LayerCode-LayerEnv][canonical(k, suffix)] = setting{name: key, value: value, source: "Set"}
	return nil
}

func invalid(name, value, source string, k *Key) error {
	return fmt.Errorf("config: %s = %q (from %s): %w: want %s", name, value, source, ErrInvalidValue, k.expected())
}

// effective returns the raw value of a declared exact key, where it came from and whether it
// was set anywhere (including a non-empty default). Callers hold c.mu.
func (c *Config) effective(k *Key) (value, source string, err error) {
	name := canonical(k, "")
	for l := len(c.over) - 1; l >= 0; l-- {
		if s, ok := c.over[l][name]; ok {
			return s.value, s.source, nil
		}
	}
	if c.file != "" && c.v.InConfig(k.Name) {
		raw := c.v.Get(k.Name)
		if _, isMap := asMap(raw); !isMap {
			s, err := scalarString(raw)
			return s, c.fileSource(k.Name), err
		}
	}
	if v, ok := c.defaults[name]; ok {
		return v, LayerDefault.String(), nil
	}
	return k.Default, LayerDefault.String(), nil
}

// validate checks every declared key's effective value and every prefix entry's name.
func (c *Config) validate() []error {
	var errs []error
	for i := range table {
		k := &table[i]
		if k.Prefix {
			continue
		}
		v, src, err := c.effective(k)
		if err != nil {
			errs = append(errs, fmt.Errorf("config: %s (from %s): %w: %v", k.Name, src, ErrInvalidValue, err))
			continue
		}
		if k.check(v) != nil {
			errs = append(errs, invalid(k.Name, v, src, k))
		}
	}
	for _, e := range c.fileEntries {
		if k, _ := lookupKey(e.name); k != nil && k.Prefix && e.err != nil {
			errs = append(errs, fmt.Errorf("config: %s (from %s): %w: %v", e.name, c.fileSource(e.name), ErrInvalidValue, e.err))
		}
	}
	return errs
}

// MinSecretLen is the shortest flint.authenticate.secret accepted: the
// executors' tokens, the shuffle token and the UI token are HMACs keyed by
// it, and a short key is guessed.
const MinSecretLen = 16

// CheckSecret refuses a configured flint.authenticate.secret shorter than
// MinSecretLen (unset is fine: the backends make a random one), naming its
// source and length, never its value.
func (c *Config) CheckSecret() error {
	k := mustKey("flint.authenticate.secret")
	v, src, _ := c.effective(k)
	if v == "" || len(v) >= MinSecretLen {
		return nil
	}
	return fmt.Errorf("config: flint.authenticate.secret (from %s) has %d characters, fewer than %d: set a longer one or leave it unset for a random secret per application: %w",
		src, len(v), MinSecretLen, ErrInvalidValue)
}

// crossCheck validates rules between keys, naming both values' sources.
func (c *Config) crossCheck() []error {
	var errs []error
	if err := c.CheckSecret(); err != nil {
		errs = append(errs, err)
	}
	if _, _, err := c.DynamicAllocation(); err != nil {
		errs = append(errs, err)
	}
	// Coarse-grained executors on Mesos send heartbeats within the network
	// timeout (local masters and fine-grained executors do not).
	hb, to := mustKey("flint.executor.heartbeatInterval"), mustKey("flint.network.timeout")
	coarseMesos := c.Bool("flint.mesos.coarse") && !strings.HasPrefix(c.String("flint.master"), "local")
	if coarseMesos && c.Duration(hb.Name) >= c.Duration(to.Name) {
		hv, hs, _ := c.effective(hb)
		tv, ts, _ := c.effective(to)
		errs = append(errs, fmt.Errorf("config: flint.executor.heartbeatInterval = %q (from %s) must be shorter than flint.network.timeout = %q (from %s): %w",
			hv, hs, tv, ts, ErrInvalidValue))
	}
	// A fine-grained Mesos executor holds its own cores beside its task's:
	// under a smaller flint.cores.max no task could ever run.
	cm, tc, ec := mustKey("flint.cores.max"), mustKey("flint.task.cpus"), mustKey("flint.mesos.mesosExecutor.cores")
	fineMesos := !c.Bool("flint.mesos.coarse") && !strings.HasPrefix(c.String("flint.master"), "local")
	if fineMesos && c.IsSet(cm.Name) && float64(c.Int(cm.Name))+1e-9 < float64(c.Int(tc.Name))+c.Float64(ec.Name) {
		cv, cs, _ := c.effective(cm)
		tv, ts, _ := c.effective(tc)
		ev, es, _ := c.effective(ec)
		errs = append(errs, fmt.Errorf("config: flint.cores.max = %q (from %s) must be at least flint.task.cpus = %q (from %s) + flint.mesos.mesosExecutor.cores = %q (from %s) in fine-grained Mesos mode (flint.mesos.coarse=false), or no task could ever run: %w",
			cv, cs, tv, ts, ev, es, ErrInvalidValue))
	}
	return errs
}

// raw returns the value of a declared key after inheritance.
func (c *Config) raw(k *Key) string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	for {
		v, _, err := c.effective(k)
		if err != nil {
			panic("config: invariant broken: " + err.Error())
		}
		if v != "" || k.Inherit == "" {
			return v
		}
		k = mustKey(k.Inherit)
	}
}

func kindKey(name string, kinds ...Kind) *Key {
	k := mustKey(name)
	for _, want := range kinds {
		if k.Kind == want {
			return k
		}
	}
	panic(fmt.Sprintf("config: key %s is a %s, not a %s", name, k.Kind, kinds[0]))
}

func broken(k *Key, v string) string {
	return fmt.Sprintf("config: invariant broken: %s has invalid value %q", k.Name, v)
}

// String returns the effective value of key as text (enum values in their declared spelling).
func (c *Config) String(key string) string {
	k := mustKey(key)
	v := c.raw(k)
	if k.Kind == KindEnum && v != "" {
		return k.enumValue(v)
	}
	return v
}

// IsSet reports whether key has a non-empty effective value (a default counts).
func (c *Config) IsSet(key string) bool {
	return c.raw(mustKey(key)) != ""
}

// Explicit reports whether key's value comes from a layer above the
// defaults (the config file, the environment, a flag or Set).
func (c *Config) Explicit(key string) bool {
	k := mustKey(key)
	c.mu.RLock()
	defer c.mu.RUnlock()
	_, source, err := c.effective(k)
	return err == nil && source != LayerDefault.String()
}

// Int returns an int key's value; 0 when it is unset.
func (c *Config) Int(key string) int {
	k := kindKey(key, KindInt)
	v := strings.TrimSpace(c.raw(k))
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		panic(broken(k, v))
	}
	return n
}

// Bool returns a bool key's value.
func (c *Config) Bool(key string) bool {
	k := kindKey(key, KindBool)
	v := c.raw(k)
	b, err := parseBool(v)
	if err != nil && v != "" {
		panic(broken(k, v))
	}
	return b
}

// Float64 returns a float (or int) key's value; 0 when it is unset.
func (c *Config) Float64(key string) float64 {
	k := kindKey(key, KindFloat, KindInt)
	v := strings.TrimSpace(c.raw(k))
	if v == "" {
		return 0
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		panic(broken(k, v))
	}
	return f
}

// Size returns a size key's value in bytes; 0 when it is unset.
func (c *Config) Size(key string) int64 {
	k := kindKey(key, KindSize)
	v := c.raw(k)
	if v == "" {
		return 0
	}
	n, err := ParseSize(v, k.SizeUnit)
	if err != nil {
		panic(broken(k, v))
	}
	return n
}

// Duration returns a duration key's value (inheriting where the key says so); 0 when unset.
func (c *Config) Duration(key string) time.Duration {
	k := kindKey(key, KindDuration)
	v := c.raw(k)
	if v == "" {
		return 0
	}
	d, err := ParseDuration(v, mustKey(k.Name).DurationUnit)
	if err != nil {
		panic(broken(k, v))
	}
	return d
}

// Prefixed returns the entries of a prefix key family (e.g. "flint.executorEnv.") as
// suffix → value, merged over every layer, with each suffix's original case.
func (c *Config) Prefixed(prefix string) map[string]string {
	if !strings.HasSuffix(prefix, ".") {
		prefix += "."
	}
	var p *Key
	for _, k := range prefixes {
		if strings.EqualFold(k.Name, prefix) {
			p = k
		}
	}
	if p == nil {
		panic("config: unknown key prefix " + prefix)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	out := map[string]string{}
	for _, e := range c.fileEntries {
		if k, suffix := lookupKey(e.name); k == p {
			out[suffix] = e.value
		}
	}
	for _, layer := range c.over {
		for _, s := range sortedSettings(layer) {
			if k, suffix := lookupKey(s.name); k == p {
				out[suffix] = s.value
			}
		}
	}
	return out
}

func sortedSettings(m map[string]setting) []setting {
	out := make([]setting, 0, len(m))
	for _, s := range m {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// Warnings returns problems that did not stop Load: deprecated keys set (naming their
// replacement), unknown flint.* keys (with a suggestion of
// the closest declared key) and keys outside flint.*.
func (c *Config) Warnings() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]string(nil), c.warnings...)
}

// DefaultRedactionRegex is flint.redaction.regex's default, Spark's spark.redaction.regex.
const DefaultRedactionRegex = "(?i)secret|password|token|key"

// minLogSecret is the shortest value of a key secret by flint.redaction.regex alone that is
// removed from every log line: shorter ones ("true", "8080") would blank unrelated text.
const minLogSecret = 6

var defaultRedaction = regexp.MustCompile(DefaultRedactionRegex)

// redaction is the compiled flint.redaction.regex (the default when unset or invalid: Load
// refuses an invalid one).
func (c *Config) redaction() *regexp.Regexp {
	src := c.String("flint.redaction.regex")
	if src == "" || src == DefaultRedactionRegex {
		return defaultRedaction
	}
	c.reMu.Lock()
	defer c.reMu.Unlock()
	if c.reSrc != src || c.re == nil {
		re, err := regexp.Compile(src)
		if err != nil {
			re = defaultRedaction
		}
		c.re, c.reSrc = re, src
	}
	return c.re
}

// IsSecretKey reports whether the value of the key named name (a prefix entry by its full
// name) is a secret: a declared secret, or a name flint.redaction.regex matches.
func (c *Config) IsSecretKey(name string) bool {
	return IsSecret(name) || c.redaction().MatchString(name)
}

// Redacted returns every non-empty effective value by key name, prefix entries under their full
// name, with secret values (IsSecretKey) replaced by Redaction. It is meant for logs, the UI
// and the REST API.
func (c *Config) Redacted() map[string]string {
	out := map[string]string{}
	re := c.redaction()
	red := func(k *Key, name, v string) string {
		if v != "" && (k.Secret || re.MatchString(name)) {
			return Redaction
		}
		return v
	}
	for i := range table {
		k := &table[i]
		if k.Prefix {
			for suffix, v := range c.Prefixed(k.Name) {
				out[k.Name+suffix] = red(k, k.Name+suffix, v)
			}
			continue
		}
		if v := c.raw(k); v != "" {
			out[k.Name] = red(k, k.Name, v)
		}
	}
	return out
}

// Secrets returns the values to remove from every log line (see logging.RedactHook): those of
// declared secret keys, and those of keys flint.redaction.regex matches that are at least six
// characters long. Comma-separated lists of secrets (flint.mesos.executor.secret.values)
// contribute each item too.
func (c *Config) Secrets() []string {
	var out []string
	re := c.redaction()
	add := func(k *Key, name, v string) {
		switch {
		case v == "":
		case k.Secret:
			out = append(out, v)
			if strings.Contains(v, ",") {
				for item := range strings.SplitSeq(v, ",") {
					if item = strings.TrimSpace(item); item != "" {
						out = append(out, item)
					}
				}
			}
		case re.MatchString(name) && len(v) >= minLogSecret:
			out = append(out, v)
		}
	}
	for i := range table {
		k := &table[i]
		if k.Prefix {
			for suffix, v := range c.Prefixed(k.Name) {
				add(k, k.Name+suffix, v)
			}
			continue
		}
		add(k, k.Name, c.raw(k))
	}
	return out
}

// Effective returns every non-empty effective value by key name (prefix entries under their full
// name), secret ones included: what a driver hands its executors (executor/jobconf). Never log
// it; Redacted is the loggable view.
func (c *Config) Effective() map[string]string {
	out := map[string]string{}
	for i := range table {
		k := &table[i]
		if k.Prefix {
			for suffix, v := range c.Prefixed(k.Name) {
				out[k.Name+suffix] = v
			}
			continue
		}
		if v := c.raw(k); v != "" {
			out[k.Name] = v
		}
	}
	return out
}

// IsSecret reports whether name is a declared secret key (its value is redacted in logs).
func IsSecret(name string) bool {
	k, _ := lookupKey(name)
	return k != nil && k.Secret
}
