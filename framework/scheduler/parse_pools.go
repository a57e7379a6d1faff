package scheduler

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// ErrPoolFile wraps every error of ParsePools.
var ErrPoolFile = errors.New("scheduler: bad pool file")

const maxPoolFile = 1 << 20

// ParsePools reads pool definitions in Spark's fairscheduler.xml format
// (format "xml"):
//
//	<allocations>
//	  <pool name="prod"><schedulingMode>FAIR</schedulingMode><weight>2</weight><minShare>1</minShare></pool>
//	</allocations>
//
// or the equivalent YAML (format "yaml" or "yml"):
//
//	pools:
//	  - {name: prod, mode: FAIR, weight: 2, minShare: 1}
//
// Missing fields default to FIFO, weight 1, minShare 0, as in Spark.
func ParsePools(r io.Reader, format string) ([]PoolConfig, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPoolFile+1))
	if err != nil {
		return nil, fmt.Errorf("%w: read: %w", ErrPoolFile, err)
	}
	if len(data) > maxPoolFile {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrPoolFile, maxPoolFile)
	}
	var raw []rawPool
	switch strings.ToLower(format) {
	case "xml":
		raw, err = parsePoolsXML(data)
	case "yaml", "yml":
		raw, err = parsePoolsYAML(data)
	default:
		return nil, fmt.Errorf("%w: unknown format %q (want xml or yaml)", ErrPoolFile, format)
	}
	if err != nil {
		return nil, err
	}
	return convertPools(raw)
}

// rawPool holds a pool's fields as text, so errors can name them.
type rawPool struct {
	Name     string `xml:"name,attr" yaml:"name"`
	Mode     string `xml:"schedulingMode" yaml:"mode"`
	Weight   string `xml:"weight" yaml:"weight"`
	MinShare string `xml:"minShare" yaml:"minShare"`
}

func parsePoolsXML(data []byte) ([]rawPool, error) {
	var doc struct {
		XMLName xml.Name  `xml:"allocations"`
		Pools   []rawPool `xml:"pool"`
	}
	if err := xml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%w: xml: %w", ErrPoolFile, err)
	}
	return doc.Pools, nil
}

func parsePoolsYAML(data []byte) ([]rawPool, error) {
	var doc struct {
		Pools []rawPool `yaml:"pools"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(data)))
	dec.KnownFields(true)
	if err := dec.Decode(&doc); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: yaml: %w", ErrPoolFile, err)
	}
	return doc.Pools, nil
}

func convertPools(raw []rawPool) ([]PoolConfig, error) {
	var errs []error
	out := make([]PoolConfig, 0, len(raw))
	for i, r := range raw {
		name := strings.TrimSpace(r.Name)
		label := fmt.Sprintf("pool %q", name)
		if name == "" {
			label = fmt.Sprintf("pool #%d", i+1)
		}
		p := PoolConfig{Name: name, Mode: FIFO, Weight: 1}
		if s := strings.TrimSpace(r.Mode); s != "" {
			m, err := ParseSchedulingMode(s)
			if err != nil {
				errs = append(errs, fmt.Errorf("%w: %s: schedulingMode %q: want FIFO or FAIR", ErrPoolFile, label, s))
			}
			p.Mode = m
		}
		p.Weight = poolInt(&errs, label, "weight", r.Weight, 1)
		p.MinShare = poolInt(&errs, label, "minShare", r.MinShare, 0)
		out = append(out, p)
	}
	for _, err := range validatePools(out) {
		errs = append(errs, fmt.Errorf("%w: %w", ErrPoolFile, err))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return out, nil
}

func poolInt(errs *[]error, label, field, s string, def int) int {
	s = strings.TrimSpace(s)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		*errs = append(*errs, fmt.Errorf("%w: %s: %s %q is not an integer", ErrPoolFile, label, field, s))
		return def
	}
	return n
}
