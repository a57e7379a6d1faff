package codec

import (
	"bytes"
	"encoding/gob"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
)

// Codec turns values into bytes and back. Implementations must be safe for
// concurrent use.
type Codec interface {
	// Name identifies the codec on the wire; it must be unique.
	Name() string
	// Marshal encodes v.
	Marshal(v any) ([]byte, error)
	// Unmarshal decodes data into v, which must be a non-nil pointer.
	Unmarshal(data []byte, v any) error
}

// ErrUnknownCodec is returned by Lookup for a name no codec is registered
// under.
var ErrUnknownCodec = errors.New("codec: unknown codec")

// The built-in codecs, registered under their names.
var (
	// Gob encodes with encoding/gob; it is the default (see Default).
	Gob Codec = GobCodec{}
	// JSON encodes with encoding/json.
	JSON Codec = JSONCodec{}
)

var (
	registryMu sync.RWMutex
	registry   = map[string]Codec{}
)

func init() {
	Register(Gob)
	Register(JSON)
}

// Default returns the codec used when none is given: Gob.
func Default() Codec { return Gob }

// Register makes c available to Lookup under c.Name(). It is meant to be
// called from init() and panics if c is nil, its name is empty or a codec
// is already registered under that name, like database/sql.Register.
func Register(c Codec) {
	if c == nil {
		panic("codec: Register of a nil codec")
	}
	name := c.Name()
	if name == "" {
		panic(fmt.Sprintf("codec: Register of %T with an empty name", c))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("codec: Register called twice for codec %q", name))
	}
	registry[name] = c
}

// Lookup returns the codec registered under name. The error wraps
// ErrUnknownCodec and lists the registered names.
func Lookup(name string) (Codec, error) {
	registryMu.RLock()
	c, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("%w %q (registered: %v)", ErrUnknownCodec, name, Names())
	}
	return c, nil
}

// Names returns the names of all registered codecs, sorted.
func Names() []string {
	registryMu.RLock()
	defer registryMu.RUnlock()
	names := make([]string, 0, len(registry))
	for name := range registry {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// GobCodec is the encoding/gob codec, named "gob". Each Marshal produces a
// self-contained gob stream (type descriptors followed by one value).
// Values of Go's basic types (bool, ints, uints, floats, string, []byte)
// take a fast path that writes and reads gob's exact bytes without
// building an encoder or decoder (see gobfast.go).
type GobCodec struct{}

// Name returns "gob".
func (GobCodec) Name() string { return "gob" }

// Marshal encodes v as a gob stream. A nil v or nil pointer is an error;
// so is anything encoding/gob panics on (such as a nil pointer stored in an
// interface inside v).
func (GobCodec) Marshal(v any) (data []byte, err error) {
	if data, ok := gobMarshalFast(v); ok {
		return data, nil
	}
	defer func() {
		if r := recover(); r != nil {
			data, err = nil, fmt.Errorf("codec: gob: marshal %T: %v", v, r)
		}
	}()
	if rv := reflect.ValueOf(v); !rv.IsValid() || rv.Kind() == reflect.Pointer && rv.IsNil() {
		return nil, fmt.Errorf("codec: gob: marshal %T: cannot encode a nil value", v)
	}
	var buf bytes.Buffer
	if err := gob.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("codec: gob: marshal %T: %w", v, err)
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes one gob value from data into v and rejects trailing
// bytes.
func (GobCodec) Unmarshal(data []byte, v any) error {
	if gobUnmarshalFast(data, v) {
		return nil
	}
	r := bytes.NewReader(data)
	if err := gob.NewDecoder(r).Decode(v); err != nil {
		return fmt.Errorf("codec: gob: unmarshal %d bytes into %T: %w", len(data), v, err)
	}
	if r.Len() != 0 {
		return fmt.Errorf("codec: gob: unmarshal into %T: %d trailing bytes", v, r.Len())
	}
	return nil
}

// JSONCodec is the encoding/json codec, named "json".
type JSONCodec struct{}

// Name returns "json".
func (JSONCodec) Name() string { return "json" }

// Marshal encodes v as JSON.
func (JSONCodec) Marshal(v any) ([]byte, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("codec: json: marshal %T: %w", v, err)
	}
	return data, nil
}

// Unmarshal decodes JSON data into v.
func (JSONCodec) Unmarshal(data []byte, v any) error {
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("codec: json: unmarshal %d bytes into %T: %w", len(data), v, err)
	}
	return nil
}
