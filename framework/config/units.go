package config

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// SizeUnit is the multiplier applied to a bare number given for a size key, in bytes.
type SizeUnit int64

// Binary size units, as Spark's byte strings use them (1k = 1024 bytes).
const (
	Byte SizeUnit = 1
	KiB  SizeUnit = 1 << 10
	MiB  SizeUnit = 1 << 20
	GiB  SizeUnit = 1 << 30
	TiB  SizeUnit = 1 << 40
	PiB  SizeUnit = 1 << 50
)

// String returns the suffix Spark uses for the unit ("b", "k", "m", "g", "t", "p").
func (u SizeUnit) String() string {
	switch u {
	case Byte:
		return "b"
	case KiB:
		return "k"
	case MiB:
		return "m"
	case GiB:
		return "g"
	case TiB:
		return "t"
	case PiB:
		return "p"
	}
	return strconv.FormatInt(int64(u), 10) + "b"
}

var sizeSuffixes = map[string]SizeUnit{
	"b": Byte,
	"k": KiB, "kb": KiB, "kib": KiB,
	"m": MiB, "mb": MiB, "mib": MiB,
	"g": GiB, "gb": GiB, "gib": GiB,
	"t": TiB, "tb": TiB, "tib": TiB,
	"p": PiB, "pb": PiB, "pib": PiB,
}

// ErrSyntax is wrapped by parse errors of sizes, durations, --conf flags and master URLs.
var ErrSyntax = errors.New("invalid syntax")

// splitNumber splits s into its leading decimal digits and the rest.
func splitNumber(s string) (num, suffix string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// ParseSize parses a Spark byte string such as "512m", "2g", "1k", "100b", "1t" or "64MB"
// (binary units, case-insensitive, optional "b" after the unit letter) into bytes. A bare number
// is multiplied by defaultUnit. Fractions and negative numbers are rejected, as in Spark.
func ParseSize(s string, defaultUnit SizeUnit) (int64, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	num, suffix := splitNumber(t)
	if num == "" {
		return 0, fmt.Errorf("size %q: %w: want a whole number with an optional unit (b, k, m, g, t, p), e.g. 512m", s, ErrSyntax)
	}
	unit := defaultUnit
	if suffix != "" {
		u, ok := sizeSuffixes[suffix]
		if !ok {
			return 0, fmt.Errorf("size %q: %w: unknown unit %q (want b, k, m, g, t or p)", s, ErrSyntax, suffix)
		}
		unit = u
	}
	if unit <= 0 {
		return 0, fmt.Errorf("size %q: %w: unit %d is not positive", s, ErrSyntax, unit)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n > math.MaxInt64/int64(unit) {
		return 0, fmt.Errorf("size %q: %w: too large", s, ErrSyntax)
	}
	return n * int64(unit), nil
}

// FormatSize renders bytes with the largest binary unit that divides it exactly ("1g", "384m",
// "100b").
func FormatSize(n int64) string {
	if n == 0 {
		return "0"
	}
	for _, u := range []SizeUnit{PiB, TiB, GiB, MiB, KiB} {
		if n%int64(u) == 0 {
			return strconv.FormatInt(n/int64(u), 10) + u.String()
		}
	}
	return strconv.FormatInt(n, 10) + "b"
}

var durationSuffixes = map[string]time.Duration{
	"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second, "m": time.Minute,
	"min": time.Minute, "h": time.Hour, "d": 24 * time.Hour,
}

// ParseDuration parses a duration in Spark's form ("5s", "100ms", "1min", "2h", "1d", "250us"),
// Go's form ("1h30m", "1.5s") or as a bare whole number multiplied by defaultUnit. Negative
// durations are rejected.
func ParseDuration(s string, defaultUnit time.Duration) (time.Duration, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	num, suffix := splitNumber(t)
	if num != "" {
		unit, ok := defaultUnit, suffix == ""
		if !ok {
			unit, ok = durationSuffixes[suffix]
		}
		if ok {
			if unit <= 0 {
				return 0, fmt.Errorf("duration %q: %w: unit %d is not positive", s, ErrSyntax, unit)
			}
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil || n > math.MaxInt64/int64(unit) {
				return 0, fmt.Errorf("duration %q: %w: too large", s, ErrSyntax)
			}
			return time.Duration(n) * unit, nil
		}
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w: want e.g. 3s, 100ms, 1min, 2h, 1d or 1h30m", s, ErrSyntax)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q: %w: must not be negative", s, ErrSyntax)
	}
	return d, nil
}

// FormatDuration renders d the way Spark users write it ("3s", "100ms", "1h", "2min") when it is
// a whole number of some unit, and in Go's form otherwise.
func FormatDuration(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	units := []struct {
		u time.Duration
		s string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "min"}, {time.Second, "s"}, {time.Millisecond, "ms"}, {time.Microsecond, "us"}}
	for _, u := range units {
		if d%u.u == 0 {
			return strconv.FormatInt(int64(d/u.u), 10) + u.s
		}
	}
	return d.String()
}

// ParseConf splits a --conf argument "key=value" at its first '='. The key must be non-empty and
// free of whitespace; the value is kept as given (it may be empty or contain '=').
func ParseConf(s string) (key, value string, err error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return "", "", fmt.Errorf("--conf %q: %w: want key=value", s, ErrSyntax)
	}
	if k == "" {
		return "", "", fmt.Errorf("--conf %q: %w: empty key", s, ErrSyntax)
	}
	if strings.IndexFunc(k, isSpaceOrControl) >= 0 {
		return "", "", fmt.Errorf("--conf %q: %w: key contains whitespace", s, ErrSyntax)
	}
	return k, v, nil
}

func isSpaceOrControl(r rune) bool {
	return r <= ' ' || r == 0x7f || r == 0x85 || r == 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff
}
