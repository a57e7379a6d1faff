package mesoslabel

import (
	"strings"
	"testing"
)

// Spark's escapes keep a comma or colon inside a key or a value; a blank
// list is no labels.
func TestParseEscapes(t *testing.T) {
	got, err := Parse(`a\:b:c\,d,e:f`)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Key != "a:b" || got[0].GetValue() != "c,d" || got[1].Key != "e" || got[1].GetValue() != "f" {
		t.Fatalf("got %v, want [a:b=c,d e=f]", got)
	}
	for _, blank := range []string{"", "  "} {
		if got, err := Parse(blank); err != nil || got != nil {
			t.Errorf("Parse(%q) = %v, %v; want no labels", blank, got, err)
		}
	}
}

// An entry without exactly one unescaped colon is refused, naming the
// entry and the escapes.
func TestParseRefuses(t *testing.T) {
	for spec, entry := range map[string]string{
		"team":        `"team"`,
		"a:b,c":       `"c"`,
		"a:b:c":       `"a:b:c"`,
		"ok:1,,x:2":   `""`,
		`a\:b`:        `"a\\:b"`,
		"team:x,rack": `"rack"`,
	} {
		_, err := Parse(spec)
		if err == nil || !strings.Contains(err.Error(), "label "+entry+" is not key:value") || !strings.Contains(err.Error(), `\,`) {
			t.Errorf("Parse(%q) = %v; want an error naming label %s", spec, err, entry)
		}
	}
}
