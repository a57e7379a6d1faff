package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// expected describes what a key accepts, for error messages: its kind and bounds.
func (k *Key) expected() string {
	return k.kindExpected() + k.bounds()
}

// bounds says " ≥ Min", " ≤ Max" or " from Min to Max"; "" without bounds.
func (k *Key) bounds() string {
	switch {
	case k.Min != "" && k.Max != "":
		return " from " + k.Min + " to " + k.Max
	case k.Min != "":
		return " ≥ " + k.Min
	case k.Max != "":
		return " ≤ " + k.Max
	}
	return ""
}

func (k *Key) kindExpected() string {
	if k.Expect != "" {
		return k.Expect
	}
	switch k.Kind {
	case KindInt:
		return "a whole number"
	case KindBool:
		return "true or false"
	case KindFloat:
		return "a number"
	case KindSize:
		return fmt.Sprintf("a size such as 512m or 2g (bare number in %s)", unitName(k.SizeUnit))
	case KindDuration:
		return fmt.Sprintf("a duration such as 3s, 100ms or 1min (bare number in %s)", FormatDuration(k.DurationUnit)[1:])
	case KindEnum:
		return "one of " + strings.Join(k.Values, ", ")
	case KindMaster:
		return "a master URL: local, local[N], local[*], local[N,F], embedded, mesos://host:port or mesos://zk://host:port/path"
	}
	return "text"
}

func unitName(u SizeUnit) string {
	switch u {
	case Byte:
		return "bytes"
	case KiB:
		return "KiB"
	case MiB:
		return "MiB"
	case GiB:
		return "GiB"
	}
	return u.String()
}

// optional reports whether the key may be left empty (unset).
func (k *Key) optional() bool {
	return k.Default == "" || k.Inherit != ""
}

// check validates one raw value for the key.
func (k *Key) check(v string) error {
	if v == "" && (k.optional() || k.Kind == KindString) {
		return nil
	}
	var err error
	switch k.Kind {
	case KindInt:
		_, err = strconv.Atoi(strings.TrimSpace(v))
	case KindBool:
		_, err = parseBool(v)
	case KindFloat:
		var f float64
		f, err = strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err == nil && (math.IsNaN(f) || math.IsInf(f, 0)) {
			err = ErrSyntax
		}
	case KindSize:
		_, err = ParseSize(v, k.SizeUnit)
	case KindDuration:
		_, err = ParseDuration(v, k.DurationUnit)
	case KindEnum:
		if k.enumValue(v) == "" {
			err = ErrSyntax
		}
	case KindMaster:
		err = ValidateMaster(v)
	}
	if err == nil && v != "" && !k.inBounds(v) {
		err = ErrOutOfRange
	}
	if err == nil && v != "" && k.Check != nil {
		err = k.Check(v)
	}
	return err
}

var appIDSyntax = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$`)

// checkAppID accepts an id safe as a file name and a URL path segment.
func checkAppID(v string) error {
	if !appIDSyntax.MatchString(v) {
		return fmt.Errorf("%w: %q", ErrSyntax, v)
	}
	return nil
}

func checkRegex(v string) error {
	if _, err := regexp.Compile(v); err != nil {
		return fmt.Errorf("%w: %v", ErrSyntax, err)
	}
	return nil
}

// ErrOutOfRange is a value outside its key's Min and Max.
var ErrOutOfRange = errors.New("out of range")

// inBounds reports whether a valid value lies within Min and Max.
func (k *Key) inBounds(v string) bool {
	n, ok := k.number(v)
	if !ok {
		return true
	}
	if lo, ok := k.number(k.Min); ok && n < lo {
		return false
	}
	if hi, ok := k.number(k.Max); ok && n > hi {
		return false
	}
	return true
}

// number is a number, size (bytes) or duration (ns) value as a float.
func (k *Key) number(v string) (float64, bool) {
	if v == "" {
		return 0, false
	}
	switch k.Kind {
	case KindInt, KindFloat:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		return f, err == nil
	case KindSize:
		n, err := ParseSize(v, k.SizeUnit)
		return float64(n), err == nil
	case KindDuration:
		d, err := ParseDuration(v, k.DurationUnit)
		return float64(d), err == nil
	}
	return 0, false
}

func (k *Key) enumValue(v string) string {
	for _, a := range k.Values {
		if strings.EqualFold(strings.TrimSpace(v), a) {
			return a
		}
	}
	return ""
}

func parseBool(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "yes", "on", "1":
		return true, nil
	case "false", "no", "off", "0":
		return false, nil
	}
	return false, ErrSyntax
}

// levenshtein is the edit distance between a and b (bytes, both lower-cased by the caller).
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// suggest returns the declared key closest to name, or "" when none is close.
func suggest(name string) string {
	lower := strings.ToLower(name)
	best, bestD, bestP := "", math.MaxInt, 0
	for i := range table {
		cand := table[i].Name
		if table[i].Prefix {
			cand += "NAME"
		}
		lc := strings.ToLower(cand)
		d, p := levenshtein(lower, lc), commonPrefix(lower, lc)
		if d < bestD || d == bestD && p > bestP {
			best, bestD, bestP = cand, d, p
		}
	}
	if bestD <= max(2, len(name)/5) {
		return best
	}
	return ""
}

func commonPrefix(a, b string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}
