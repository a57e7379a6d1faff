package config

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/viper"
)

// Sentinel errors wrapped by validation errors.
var (
	ErrUnknownKey   = errors.New("unknown key")
	ErrInvalidValue = errors.New("invalid value")
)

// Redaction replaces secret values in Redacted and in logs.
const Redaction = "*****"

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
}

// Load builds a Config from defaults, opts.File, opts.Environ and opts.Conf, and validates every
// effective value. The error joins every problem found; each names the key, the value, the
// layer it came from and what is expected.
func Load(opts LoadOptions) (*Config, error) {
	c := New()
	if opts.File != "" {
		if err := c.readFile(opts.File); err != nil {
			return nil, err
		}
	}
	var errs []error
	for _, e := range c.fileEntries {
		c.noteFileKey(e)
	}
	c.loadEnv(opts.Environ)
	for _, arg := range opts.Conf {
		key, value, err := ParseConf(arg)
		if err != nil {
			errs = append(errs, fmt.Errorf("config: %w", err))
			continue
		}
		c.put(LayerFlag, key, value, "--conf "+key)
	}
	errs = append(errs, c.validate()...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return c, nil
}

// noteFileKey records warnings for keys of the file that Flint does not know.
func (c *Config) noteFileKey(e fileEntry) {
	if k, _ := lookupKey(e.name); k == nil {
		c.warnUnknown(e.name, "config file "+c.file)
	}
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

// loadEnv reads FLINT_* variables: FLINT_EXECUTOR_MEMORY → flint.executor.memory (matched
// case-insensitively against declared keys, '_' for '.'), FLINT_EXECUTORENV_MY_VAR →
// flint.executorEnv.MY_VAR. Other FLINT_* variables (FLINT_USER, executor settings) are ignored.
func (c *Config) loadEnv(environ []string) {
	for _, kv := range environ {
		name, value, ok := strings.Cut(kv, "=")
		if !ok || len(name) <= len("FLINT_") || !strings.EqualFold(name[:len("FLINT_")], "FLINT_") {
			continue
		}
		if key := envKey(name); key != "" {
			c.put(LayerEnv, key, value, "environment variable "+name)
		}
	}
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
			return s, "config file " + c.file, err
		}
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
			errs = append(errs, fmt.Errorf("config: %s (from config file %s): %w: %v", e.name, c.file, ErrInvalidValue, e.err))
		}
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

// Warnings returns problems that did not stop Load: unknown flint.* keys (with a suggestion of
// the closest declared key) and keys outside flint.*.
func (c *Config) Warnings() []string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return append([]string(nil), c.warnings...)
}

// Redacted returns every non-empty effective value by key name, prefix entries under their full
// name, with secret values replaced by Redaction. It is meant for logs.
func (c *Config) Redacted() map[string]string {
	out := map[string]string{}
	for i := range table {
		k := &table[i]
		if k.Prefix {
			for suffix, v := range c.Prefixed(k.Name) {
				out[k.Name+suffix] = redact(k, v)
			}
			continue
		}
		if v := c.raw(k); v != "" {
			out[k.Name] = redact(k, v)
		}
	}
	return out
}

func redact(k *Key, v string) string {
	if k.Secret && v != "" {
		return Redaction
	}
	return v
}

// Secrets returns the non-empty values of secret keys, for log redaction (see logging.RedactHook).
func (c *Config) Secrets() []string {
	var out []string
	for i := range table {
		if k := &table[i]; k.Secret && !k.Prefix {
			if v := c.raw(k); v != "" {
				out = append(out, v)
			}
		}
	}
	return out
}
