package agent

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// ErrParse: a --resources or --attributes string is malformed.
var ErrParse = errors.New("agent: parse")

// ParseResources parses Mesos' --resources syntax:
// "cpus:4;mem:2048;ports:[31000-32000];disks:{a,b}", optionally with a role,
// "cpus(web):2". Scalars, ranges ([a-b,c-d]) and sets ({x,y}) are supported.
func ParseResources(s string) ([]mesos.Resource, error) {
	var out []mesos.Resource
	var errs []error
	for _, part := range splitTop(s) {
		name, value, ok := strings.Cut(part, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			errs = append(errs, fmt.Errorf("%w: resource %q: want name:value", ErrParse, part))
			continue
		}
		r := mesos.Resource{Name: name}
		if i := strings.IndexByte(name, '('); i >= 0 {
			if !strings.HasSuffix(name, ")") {
				errs = append(errs, fmt.Errorf("%w: resource %q: bad role", ErrParse, part))
				continue
			}
			role := name[i+1 : len(name)-1]
			r.Name = name[:i]
			if role != "*" {
				r.Role = &role
			}
		}
		v, err := parseValue(strings.TrimSpace(value))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: resource %q: %v", ErrParse, part, err))
			continue
		}
		if v.Type == mesos.TEXT {
			errs = append(errs, fmt.Errorf("%w: resource %q: text values are not resources", ErrParse, part))
			continue
		}
		r.Type, r.Scalar, r.Ranges, r.Set = v.Type.Enum(), v.Scalar, v.Ranges, v.Set
		out = append(out, r)
	}
	return out, errors.Join(errs...)
}

// ParseAttributes parses Mesos' --attributes syntax: "rack:r1;zone:z2;level:3".
func ParseAttributes(s string) ([]mesos.Attribute, error) {
	var out []mesos.Attribute
	var errs []error
	for _, part := range splitTop(s) {
		name, value, ok := strings.Cut(part, ":")
		name = strings.TrimSpace(name)
		if !ok || name == "" {
			errs = append(errs, fmt.Errorf("%w: attribute %q: want name:value", ErrParse, part))
			continue
		}
		v, err := parseValue(strings.TrimSpace(value))
		if err != nil {
			errs = append(errs, fmt.Errorf("%w: attribute %q: %v", ErrParse, part, err))
			continue
		}
		out = append(out, mesos.Attribute{Name: name, Type: v.Type, Scalar: v.Scalar, Ranges: v.Ranges, Set: v.Set, Text: v.Text})
	}
	return out, errors.Join(errs...)
}

// splitTop splits on ';' and drops empty parts.
func splitTop(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ";") {
		if strings.TrimSpace(p) != "" {
			out = append(out, strings.TrimSpace(p))
		}
	}
	return out
}

func parseValue(v string) (mesos.Value, error) {
	switch {
	case v == "":
		return mesos.Value{}, errors.New("empty value")
	case strings.HasPrefix(v, "["):
		if !strings.HasSuffix(v, "]") {
			return mesos.Value{}, errors.New("unterminated range")
		}
		var rs []mesos.Value_Range
		for _, r := range strings.Split(v[1:len(v)-1], ",") {
			lo, hi, ok := strings.Cut(strings.TrimSpace(r), "-")
			b, err1 := strconv.ParseUint(strings.TrimSpace(lo), 10, 64)
			e, err2 := strconv.ParseUint(strings.TrimSpace(hi), 10, 64)
			if !ok || err1 != nil || err2 != nil || b > e {
				return mesos.Value{}, fmt.Errorf("bad range %q", r)
			}
			rs = append(rs, mesos.Value_Range{Begin: b, End: e})
		}
		return mesos.Value{Type: mesos.RANGES, Ranges: &mesos.Value_Ranges{Range: rs}}, nil
	case strings.HasPrefix(v, "{"):
		if !strings.HasSuffix(v, "}") {
			return mesos.Value{}, errors.New("unterminated set")
		}
		var items []string
		for _, it := range strings.Split(v[1:len(v)-1], ",") {
			if it = strings.TrimSpace(it); it != "" {
				items = append(items, it)
			}
		}
		return mesos.Value{Type: mesos.SET, Set: &mesos.Value_Set{Item: items}}, nil
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil {
		if f < 0 {
			return mesos.Value{}, fmt.Errorf("negative scalar %v", f)
		}
		return mesos.Value{Type: mesos.SCALAR, Scalar: &mesos.Value_Scalar{Value: f}}, nil
	}
	return mesos.Value{Type: mesos.TEXT, Text: &mesos.Value_Text{Value: v}}, nil
}
