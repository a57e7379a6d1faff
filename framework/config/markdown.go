package config

import (
	"bytes"
	"fmt"
	"strings"
)

// Markdown renders the configuration reference page (docs/configuration.md) from the key table.
func Markdown() []byte {
	var b bytes.Buffer
	b.WriteString(`# Configuration

<!-- Generated from framework/config by "go run ./cmd/flint gen-config-doc". Do not edit. -->

Flint's configuration mirrors Spark's: keys are Spark's names under ` + "`flint.`" + `. Each key's
value comes from the highest of these layers that sets it:

1. defaults (below);
2. the config file given with ` + "`--config`" + ` (YAML, TOML, JSON or Java properties, chosen by the
   extension ` + "`.yaml`/`.yml`, `.toml`, `.json`, `.properties`/`.conf`" + `; nested maps and flat dotted keys
   are both accepted);
3. environment variables: ` + "`FLINT_EXECUTOR_MEMORY`" + ` sets ` + "`flint.executor.memory`" + ` (matched
   case-insensitively, ` + "`_`" + ` for ` + "`.`" + `), ` + "`FLINT_EXECUTORENV_MY_VAR`" + ` sets
   ` + "`flint.executorEnv.MY_VAR`" + `;
4. ` + "`--conf key=value`" + ` flags;
5. values set in code (` + "`Config.Set`" + `).

Every effective value is checked when the configuration is loaded; an error names the key, the
value, where it came from and what is expected. A ` + "`flint.*`" + ` key in a ` + "`--conf`" + ` flag or the config
file that Flint does not know but that is a typo away from a known key (a small edit distance,
as many dots) is an error naming the key meant (` + "`flint.mesos.corse`" + `: did you mean
` + "`flint.mesos.coarse`" + `?); other unknown keys are reported as warnings, with the closest known key
when there is one.

**Sizes** are Spark byte strings with binary units: ` + "`100b`, `1k`, `512m`, `2g`, `1t`" + `
(case-insensitive, ` + "`mb`" + `-style suffixes accepted). A bare number is in the unit the key states.

**Durations** are Spark's (` + "`250us`, `100ms`, `5s`, `2m`/`2min`, `2h`, `1d`" + `) or Go's (` + "`1h30m`, `1.5s`" + `).
A bare number is in the unit the key states (seconds unless it says milliseconds).

Secret keys are never logged: logs and ` + "`Config.Redacted`" + ` show ` + "`" + Redaction + "`" + `.
`)
	keys := Keys()
	for _, g := range groupOrder {
		fmt.Fprintf(&b, "\n## %s\n\n| Key | Type | Default | Meaning |\n|---|---|---|---|\n", g)
		for _, k := range keys {
			if k.Group != g {
				continue
			}
			name := k.Name
			if k.Prefix {
				name += "NAME"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", name, kindCell(&k), defaultCell(&k), cell(k.Doc))
		}
	}
	return b.Bytes()
}

func kindCell(k *Key) string {
	s := k.Kind.String()
	switch k.Kind {
	case KindEnum:
		s += ": " + strings.Join(k.Values, ", ")
	case KindSize:
		s += " (bare number: " + unitName(k.SizeUnit) + ")"
	case KindDuration:
		s += " (bare number: " + FormatDuration(k.DurationUnit)[1:] + ")"
	}
	if b := k.bounds(); b != "" {
		s += "," + b
	}
	if k.Secret {
		s += ", secret"
	}
	return s
}

func defaultCell(k *Key) string {
	switch {
	case k.Inherit != "":
		return "`" + k.Inherit + "`"
	case k.Default == "":
		return "(unset)"
	}
	return "`" + k.Default + "`"
}

func cell(s string) string {
	return strings.ReplaceAll(s, "|", `\|`)
}
