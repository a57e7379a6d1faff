package mesoslabel

import (
	"fmt"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// Parse parses Spark's label list: comma-separated key:value, where "\,"
// and "\:" stand for a comma and a colon inside a key or value. Each
// entry must have exactly one unescaped colon. An empty (or blank) list
// is no labels.
func Parse(spec string) ([]mesos.Label, error) {
	var labels []mesos.Label
	if strings.TrimSpace(spec) == "" {
		return nil, nil
	}
	for _, item := range splitUnescaped(spec, ',') {
		parts := splitUnescaped(item, ':')
		if len(parts) != 2 {
			return nil, fmt.Errorf("label %q is not key:value (escape a literal comma or colon as \\, or \\:)", item)
		}
		v := unescape(parts[1])
		labels = append(labels, mesos.Label{Key: unescape(parts[0]), Value: &v})
	}
	return labels, nil
}

// splitUnescaped splits s at every sep not preceded by a backslash.
func splitUnescaped(s string, sep byte) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if s[i] == sep && (i == 0 || s[i-1] != '\\') {
			parts = append(parts, s[start:i])
			start = i + 1
		}
	}
	return append(parts, s[start:])
}

func unescape(s string) string {
	return strings.NewReplacer(`\,`, ",", `\:`, ":").Replace(s)
}
