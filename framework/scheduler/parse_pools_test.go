package scheduler

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParsePools(t *testing.T) {
	want := []PoolConfig{
		{Name: "prod", Mode: FAIR, Weight: 2, MinShare: 1},
		{Name: "adhoc", Mode: FIFO, Weight: 1, MinShare: 0},
	}
	xmlDoc := `<?xml version="1.0"?>
<allocations>
  <pool name="prod"><schedulingMode>FAIR</schedulingMode><weight>2</weight><minShare>1</minShare></pool>
  <pool name="adhoc"></pool>
</allocations>`
	yamlDoc := "pools:\n  - {name: prod, mode: fair, weight: 2, minShare: 1}\n  - name: adhoc\n"
	for _, c := range []struct{ format, doc string }{{"xml", xmlDoc}, {"yaml", yamlDoc}, {"YML", yamlDoc}} {
		got, err := ParsePools(strings.NewReader(c.doc), c.format)
		if err != nil {
			t.Fatalf("%s: %v", c.format, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: got %+v, want %+v", c.format, got, want)
		}
	}
}

func TestParsePoolsErrors(t *testing.T) {
	for _, c := range []struct{ format, doc, want string }{
		{"xml", `<allocations><pool name="a"><weight>two</weight></pool></allocations>`, `pool "a": weight "two" is not an integer`},
		{"xml", `<allocations><pool name="a"><schedulingMode>RR</schedulingMode></pool></allocations>`, `pool "a": schedulingMode "RR": want FIFO or FAIR`},
		{"xml", `<allocations><pool name="a"><minShare>-1</minShare></pool></allocations>`, `pool "a": minShare must be >= 0, got -1`},
		{"xml", `<allocations><pool><weight>1</weight></pool></allocations>`, `pool #0: empty name`},
		{"yaml", "pools:\n - {name: a, weight: 0}\n", `pool "a": weight must be >= 1, got 0`},
		{"yaml", "pools:\n - {name: a}\n - {name: a}\n", `pool "a": defined twice`},
		{"yaml", "pools:\n - {name: a, wieght: 3}\n", `field wieght not found`},
		{"xml", `<allocations><pool name="a">`, `xml:`},
		{"toml", ``, `unknown format "toml"`},
	} {
		_, err := ParsePools(strings.NewReader(c.doc), c.format)
		if err == nil || !errors.Is(err, ErrPoolFile) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %q: got %v, want an ErrPoolFile containing %q", c.format, c.doc, err, c.want)
		}
	}
}

func FuzzParsePools(f *testing.F) {
	f.Add(`<allocations><pool name="p"><schedulingMode>FAIR</schedulingMode><weight>2</weight><minShare>1</minShare></pool></allocations>`, true)
	f.Add("pools:\n  - {name: p, mode: FAIR, weight: 2, minShare: 1}\n", false)
	f.Add("pools: [{name: &a x, weight: *a}]", false)
	f.Fuzz(func(t *testing.T, doc string, isXML bool) {
		format := "yaml"
		if isXML {
			format = "xml"
		}
		pools, err := ParsePools(strings.NewReader(doc), format)
		if err != nil {
			return
		}
		if verrs := validatePools(pools); len(verrs) > 0 {
			t.Fatalf("accepted invalid pools %+v: %v", pools, verrs)
		}
		cfg := DefaultConfig()
		cfg.Mode = FAIR
		cfg.Pools = pools
		if _, err := New(cfg, nil); err != nil {
			t.Fatalf("parsed pools rejected by New: %v", err)
		}
	})
}
