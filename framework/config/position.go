package config

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"go.yaml.in/yaml/v3"
)

// fileSource names where a config file entry came from: "config file
// path:line" when the line is known.
func (c *Config) fileSource(name string) string {
	for _, e := range c.fileEntries {
		if strings.EqualFold(e.name, name) && e.line > 0 {
			return fmt.Sprintf("config file %s:%d", c.file, e.line)
		}
	}
	return "config file " + c.file
}

// entryLines finds the line of each flattened key of a YAML or TOML file
// (1-based; 0 when unknown), keyed by lower-cased dotted name.
func entryLines(format string, data []byte) map[string]int {
	switch format {
	case "yaml":
		var doc yaml.Node
		if yaml.Unmarshal(data, &doc) != nil || len(doc.Content) == 0 {
			return nil
		}
		out := map[string]int{}
		yamlLines("", doc.Content[0], out)
		return out
	case "toml":
		return tomlLines(string(data))
	}
	return nil
}

func yamlLines(prefix string, n *yaml.Node, out map[string]int) {
	if n.Kind != yaml.MappingNode {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		name := k.Value
		if prefix != "" {
			name = prefix + "." + k.Value
		}
		if v.Kind == yaml.MappingNode {
			yamlLines(name, v, out)
			continue
		}
		out[strings.ToLower(name)] = k.Line
	}
}

// tomlLines reads `[table]` headers and `key = value` lines, which is how
// configuration files are written; keys inside inline tables or arrays of
// tables get no line (their errors name the file only).
func tomlLines(data string) map[string]int {
	out := map[string]int{}
	table := ""
	sc := bufio.NewScanner(strings.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "[["):
			table = "\x00" // keys of arrays of tables are not tracked
		case strings.HasPrefix(line, "["):
			end := strings.Index(line, "]")
			if end < 0 {
				continue
			}
			table = tomlKey(line[1:end])
		case line == "" || line[0] == '#' || table == "\x00":
		default:
			k, _, ok := strings.Cut(line, "=")
			if !ok {
				continue
			}
			name := tomlKey(k)
			if table != "" {
				name = table + "." + name
			}
			out[strings.ToLower(name)] = n
		}
	}
	return out
}

func tomlKey(s string) string {
	parts := strings.Split(strings.TrimSpace(s), ".")
	for i, p := range parts {
		parts[i] = strings.Trim(strings.TrimSpace(p), `"'`)
	}
	return strings.Join(parts, ".")
}

// syntaxPosition rewrites a decoder's syntax error to start with the
// line (and column where known) it is about: "line 5: …" or "line 3,
// column 15: …".
func syntaxPosition(format string, data []byte, err error) error {
	var tomlErr *toml.DecodeError
	var jsonErr *json.SyntaxError
	switch {
	case errors.As(err, &tomlErr):
		row, col := tomlErr.Position()
		return fmt.Errorf("line %d, column %d: %w", row, col, err)
	case errors.As(err, &jsonErr):
		line, col := lineCol(data, jsonErr.Offset-1) // Offset is just past the offending byte
		return fmt.Errorf("line %d, column %d: %w", line, col, err)
	case format == "yaml":
		return yamlPosition(data, err)
	}
	return err
}

func lineCol(data []byte, offset int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < offset && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// yamlPosition corrects the line of a YAML parser error: the decoder names
// the line where the construct it was parsing began (often the line before
// the mistake). The mistake is on the first line whose prefix of the file
// fails to parse with the same message.
func yamlPosition(data []byte, err error) error {
	msg, reported, ok := yamlErrorLine(err)
	if !ok {
		return err
	}
	lines := strings.SplitAfter(string(data), "\n")
	for k := 1; k <= len(lines); k++ {
		var m map[string]any
		perr := yaml.Unmarshal([]byte(strings.Join(lines[:k], "")), &m)
		if perr == nil {
			continue
		}
		if pmsg, _, ok := yamlErrorLine(perr); ok && pmsg == msg && k != reported {
			return fmt.Errorf("yaml: line %d: %s", k, msg)
		}
		break
	}
	return err
}

// yamlErrorLine splits "yaml: line N: message".
func yamlErrorLine(err error) (msg string, line int, ok bool) {
	rest, found := strings.CutPrefix(err.Error(), "yaml: line ")
	if !found {
		return "", 0, false
	}
	num, msg, found := strings.Cut(rest, ": ")
	n, perr := strconv.Atoi(num)
	if !found || perr != nil {
		return "", 0, false
	}
	return msg, n, true
}
