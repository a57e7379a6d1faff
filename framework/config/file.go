package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/spf13/viper"
	"go.yaml.in/yaml/v3"
)

// formats maps a config file's extension (lower-case, without the dot) to its format.
var formats = map[string]string{
	"yaml": "yaml", "yml": "yaml",
	"toml":       "toml",
	"json":       "json",
	"properties": "properties", "props": "properties", "prop": "properties", "conf": "properties",
}

// fileEntry is one leaf of a config file, flattened to a dotted key with its original case.
type fileEntry struct {
	name, value string
	err         error
	line        int // 1-based; 0 when unknown
}

// capturingCodec decodes one format for viper and records the flattened leaves with their
// original case, which viper's case-insensitive store loses.
type capturingCodec struct {
	format  string
	entries *[]fileEntry
}

func (c capturingCodec) Decode(b []byte, v map[string]any) error {
	m := map[string]any{}
	switch c.format {
	case "yaml":
		if err := yaml.Unmarshal(b, &m); err != nil {
			return syntaxPosition(c.format, b, err)
		}
	case "toml":
		if err := toml.Unmarshal(b, &m); err != nil {
			return syntaxPosition(c.format, b, err)
		}
	case "json":
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&m); err != nil {
			return syntaxPosition(c.format, b, err)
		}
	case "properties":
		pairs, lines, err := parsePropertiesLines(string(b))
		if err != nil {
			return err
		}
		for i, p := range pairs {
			m[p[0]] = p[1]
			*c.entries = append(*c.entries, fileEntry{name: p[0], value: p[1], line: lines[i]})
		}
		for k, val := range m {
			v[k] = val
		}
		return nil
	}
	start := len(*c.entries)
	*c.entries = flatten("", m, *c.entries)
	lines := entryLines(c.format, b)
	for i := start; i < len(*c.entries); i++ {
		e := &(*c.entries)[i]
		e.line = lines[strings.ToLower(e.name)]
	}
	for k, val := range m {
		v[k] = val
	}
	return nil
}

func (c capturingCodec) Encode(v map[string]any) ([]byte, error) {
	switch c.format {
	case "yaml":
		return yaml.Marshal(v)
	case "toml":
		return toml.Marshal(v)
	case "json":
		return json.MarshalIndent(v, "", "  ")
	}
	var b strings.Builder
	for _, e := range flatten("", v, nil) {
		fmt.Fprintf(&b, "%s=%s\n", e.name, e.value)
	}
	return []byte(b.String()), nil
}

// flatten appends the leaves of m under prefix, sorted by key so that the order is stable.
func flatten(prefix string, m map[string]any, out []fileEntry) []fileEntry {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		name := k
		if prefix != "" {
			name = prefix + "." + k
		}
		if sub, ok := asMap(m[k]); ok {
			out = flatten(name, sub, out)
			continue
		}
		s, err := scalarString(m[k])
		out = append(out, fileEntry{name: name, value: s, err: err})
	}
	return out
}

func asMap(v any) (map[string]any, bool) {
	switch m := v.(type) {
	case map[string]any:
		return m, true
	case map[any]any:
		out := make(map[string]any, len(m))
		for k, val := range m {
			out[fmt.Sprint(k)] = val
		}
		return out, true
	}
	return nil, false
}

// scalarString renders a decoded file value as the text a user would have written. Lists of
// scalars become comma-separated (handy for flint.mesos.uris).
func scalarString(v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case json.Number:
		return x.String(), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case float32:
		return strconv.FormatFloat(float64(x), 'f', -1, 32), nil
	case int, int8, int16, int32, int64, uint, uint8, uint16, uint32, uint64:
		return fmt.Sprint(x), nil
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			s, err := scalarString(e)
			if err != nil {
				return "", err
			}
			parts[i] = s
		}
		return strings.Join(parts, ","), nil
	}
	if _, ok := asMap(v); ok {
		return "", fmt.Errorf("a table/map where a single value belongs")
	}
	return fmt.Sprint(v), nil
}

// readFile loads path into c.v (viper) and c.fileEntries.
func (c *Config) readFile(path string) error {
	ext := strings.ToLower(strings.TrimPrefix(filepath.Ext(path), "."))
	format, ok := formats[ext]
	if !ok {
		return fmt.Errorf("config: file %s: %w: unsupported extension %q (want .yaml, .yml, .toml, .json, .properties or .conf)", path, ErrSyntax, filepath.Ext(path))
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("config: %w", err)
	}
	var entries []fileEntry
	reg := viper.NewCodecRegistry()
	if err := reg.RegisterCodec(format, capturingCodec{format: format, entries: &entries}); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	v := viper.NewWithOptions(viper.WithCodecRegistry(reg))
	c.setDefaults(v)
	v.SetConfigType(format)
	if err := v.ReadConfig(bytes.NewReader(data)); err != nil {
		var parse viper.ConfigParseError
		if errors.As(err, &parse) && parse.Unwrap() != nil {
			err = parse.Unwrap() // viper's "While parsing config:" adds nothing
		}
		return fmt.Errorf("config: file %s: %w", path, err)
	}
	c.v, c.file, c.fileEntries = v, path, entries
	return nil
}
