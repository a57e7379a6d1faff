package csvfile

import (
	"encoding"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/flint-mesos/flint/framework/formats"
)

// column is one field of T and the column it is read from or written as.
type column struct {
	name  string
	index []int
	typ   reflect.Type
}

// columns are T's exported fields in declaration order, named by their csv tag (or their
// name), without those tagged "-" and the *formats.Corrupt field.
func columns(t reflect.Type) ([]column, error) {
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("csvfile: %v is not a struct", t)
	}
	corrupt := formats.CorruptField(t)
	var out []column
	for _, f := range reflect.VisibleFields(t) {
		if !f.IsExported() || f.Anonymous && f.Type.Kind() == reflect.Struct && f.Tag.Get("csv") == "" {
			continue
		}
		if corrupt != nil && slices.Equal(f.Index, corrupt) {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("csv"), ",")
		if name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if !supported(f.Type) {
			return nil, fmt.Errorf("csvfile: field %s.%s has type %v, which CSV cannot hold (strings, bools, numbers, time.Time, encoding.TextUnmarshaler and pointers to them)", t, f.Name, f.Type)
		}
		out = append(out, column{name: name, index: f.Index, typ: f.Type})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("csvfile: %v has no exported field to read a column into", t)
	}
	return out, nil
}

var (
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	timeType        = reflect.TypeFor[time.Time]()
)

func supported(t reflect.Type) bool {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType || reflect.PointerTo(t).Implements(textUnmarshaler) {
		return true
	}
	switch t.Kind() {
	case reflect.String, reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// set parses s into v (a field of type c.typ). An empty value sets a pointer to nil and a
// string to ""; for any other type it is an error (use a pointer field for optional values).
func set(v reflect.Value, s string) error {
	if v.Kind() == reflect.Pointer {
		if s == "" {
			v.SetZero()
			return nil
		}
		p := reflect.New(v.Type().Elem())
		if err := set(p.Elem(), s); err != nil {
			return err
		}
		v.Set(p)
		return nil
	}
	if v.Type() == timeType {
		t, err := parseTime(s)
		if err != nil {
			return err
		}
		v.Set(reflect.ValueOf(t))
		return nil
	}
	if u, ok := v.Addr().Interface().(encoding.TextUnmarshaler); ok {
		return u.UnmarshalText([]byte(s))
	}
	if s == "" && v.Kind() != reflect.String {
		return fmt.Errorf("empty value for a %v (use a pointer field for a column that may be empty)", v.Type())
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("%q is not a bool", s)
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not an %v", s, v.Type())
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a %v", s, v.Type())
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, v.Type().Bits())
		if err != nil {
			return fmt.Errorf("%q is not a %v", s, v.Type())
		}
		v.SetFloat(f)
	}
	return nil
}

// parseTime reads RFC 3339 (with or without fractional seconds) or a date (2006-01-02).
func parseTime(s string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time or a date", s)
}

// format is v as a CSV value: what set reads back.
func format(v reflect.Value) (string, error) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", nil
		}
		v = v.Elem()
	}
	if v.Type() == timeType {
		return v.Interface().(time.Time).Format(time.RFC3339Nano), nil
	}
	if v.Type().Implements(textMarshaler) {
		b, err := v.Interface().(encoding.TextMarshaler).MarshalText()
		return string(b), err
	}
	if v.CanAddr() && v.Addr().Type().Implements(textMarshaler) {
		b, err := v.Addr().Interface().(encoding.TextMarshaler).MarshalText()
		return string(b), err
	}
	switch v.Kind() {
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return strconv.FormatBool(v.Bool()), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10), nil
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, v.Type().Bits()), nil
	}
	return "", fmt.Errorf("csvfile: cannot write a %v", v.Type())
}
