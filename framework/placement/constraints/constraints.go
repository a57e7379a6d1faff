package constraints

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("constraints: syntax error")

// SyntaxError says where a constraint string is malformed.
type SyntaxError struct {
	Input  string // the whole constraint string
	Offset int    // byte offset of Token in Input
	Token  string // the offending term or value
	Msg    string // what is wrong
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("constraints: %s at offset %d (%q) in %q", e.Msg, e.Offset, e.Token, e.Input)
}

// Unwrap makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }

// Constraint is one term: an attribute name and the values it accepts (none: presence only).
type Constraint struct {
	Attribute string
	Values    []string
}

// Constraints is a parsed constraint string; every term must hold. The zero value matches every
// offer.
type Constraints []Constraint

// Parse reads Spark's constraint syntax. Whitespace around names and values is ignored; an empty
// (or all-blank) string yields no constraints.
func Parse(s string) (Constraints, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var out Constraints
	seen := map[string]bool{}
	off := 0
	for term := range strings.SplitSeq(s, ";") {
		c, err := parseTerm(s, term, off)
		if err != nil {
			return nil, err
		}
		if seen[c.Attribute] {
			return nil, &SyntaxError{Input: s, Offset: off, Token: term, Msg: "attribute " + strconv.Quote(c.Attribute) + " given twice"}
		}
		seen[c.Attribute] = true
		out = append(out, c)
		off += len(term) + 1
	}
	return out, nil
}

func parseTerm(input, term string, off int) (Constraint, error) {
	name, values, hasValues := strings.Cut(term, ":")
	if strings.TrimSpace(term) == "" {
		return Constraint{}, &SyntaxError{Input: input, Offset: off, Token: term, Msg: "empty term (two ';' in a row, or a leading/trailing ';')"}
	}
	c := Constraint{Attribute: strings.TrimSpace(name)}
	if c.Attribute == "" {
		return Constraint{}, &SyntaxError{Input: input, Offset: off, Token: term, Msg: "missing attribute name before ':'"}
	}
	if i := strings.Index(name, ","); i >= 0 {
		return Constraint{}, &SyntaxError{Input: input, Offset: off + i, Token: term, Msg: "',' in attribute name (values go after ':')"}
	}
	if !hasValues {
		return c, nil
	}
	voff := off + len(name) + 1
	if strings.Contains(values, ":") {
		i := strings.Index(values, ":")
		return Constraint{}, &SyntaxError{Input: input, Offset: voff + i, Token: term, Msg: "second ':' in one term (separate terms with ';')"}
	}
	if strings.TrimSpace(values) == "" {
		return Constraint{}, &SyntaxError{Input: input, Offset: voff, Token: term, Msg: "empty value list after ':' (drop the ':' to require only the attribute's presence)"}
	}
	for v := range strings.SplitSeq(values, ",") {
		tv := strings.TrimSpace(v)
		if tv == "" {
			return Constraint{}, &SyntaxError{Input: input, Offset: voff, Token: term, Msg: "empty value in list of attribute " + strconv.Quote(c.Attribute)}
		}
		c.Values = append(c.Values, tv)
		voff += len(v) + 1
	}
	return c, nil
}

// String renders the constraints in the syntax Parse reads.
func (cs Constraints) String() string {
	var b strings.Builder
	for i, c := range cs {
		if i > 0 {
			b.WriteByte(';')
		}
		b.WriteString(c.Attribute)
		if len(c.Values) > 0 {
			b.WriteByte(':')
			b.WriteString(strings.Join(c.Values, ","))
		}
	}
	return b.String()
}

// Match reports whether attrs satisfy every constraint.
func (cs Constraints) Match(attrs []mesos.Attribute) bool { return cs.Check(attrs) == nil }

// Check returns nil when attrs satisfy every constraint, else an *UnmetError saying which terms
// failed and why (for logs and "why is this task not placed" answers).
func (cs Constraints) Check(attrs []mesos.Attribute) error {
	var unmet []string
	for _, c := range cs {
		if why := c.check(attrs); why != "" {
			unmet = append(unmet, why)
		}
	}
	if unmet == nil {
		return nil
	}
	return &UnmetError{Reasons: unmet}
}

// UnmetError lists the constraint terms an offer failed.
type UnmetError struct{ Reasons []string }

func (e *UnmetError) Error() string {
	return "constraints: unmet: " + strings.Join(e.Reasons, "; ")
}

// check returns "" when some attribute named c.Attribute satisfies c, else the reason.
func (c Constraint) check(attrs []mesos.Attribute) string {
	var why string
	for i := range attrs {
		a := &attrs[i]
		if a.Name != c.Attribute {
			continue
		}
		if len(c.Values) == 0 {
			return ""
		}
		if why = c.checkValue(a); why == "" {
			return ""
		}
	}
	if why == "" {
		return fmt.Sprintf("attribute %q missing", c.Attribute)
	}
	return why
}

func (c Constraint) checkValue(a *mesos.Attribute) string {
	want := strings.Join(c.Values, ",")
	switch a.Type {
	case mesos.TEXT:
		got := a.GetText().GetValue()
		for _, v := range c.Values {
			if v == got {
				return ""
			}
		}
		return fmt.Sprintf("attribute %q is %q, want one of %s", c.Attribute, got, want)
	case mesos.SCALAR:
		got := a.GetScalar().GetValue()
		for _, v := range c.Values {
			if f, err := strconv.ParseFloat(v, 64); err == nil && fixed(f) <= fixed(got) {
				return ""
			}
		}
		return fmt.Sprintf("scalar attribute %q is %s, want at least one of %s", c.Attribute, strconv.FormatFloat(got, 'f', -1, 64), want)
	case mesos.RANGES:
		for _, v := range c.Values {
			if n, err := strconv.ParseUint(v, 10, 64); err == nil && inRanges(n, a.GetRanges()) {
				return ""
			}
		}
		return fmt.Sprintf("range attribute %q is %s, want it to contain one of %s", c.Attribute, rangesString(a.GetRanges()), want)
	case mesos.SET:
		have := map[string]bool{}
		for _, it := range a.GetSet().GetItem() {
			have[it] = true
		}
		for _, v := range c.Values {
			if !have[v] {
				return fmt.Sprintf("set attribute %q is {%s}, lacks %q", c.Attribute, strings.Join(a.GetSet().GetItem(), ","), v)
			}
		}
		return ""
	}
	return fmt.Sprintf("attribute %q has unsupported type %s", c.Attribute, a.Type)
}

// fixed rounds to Mesos' three-decimal scalar precision.
func fixed(f float64) int64 { return int64(math.Round(f * 1000)) }

func inRanges(n uint64, rs *mesos.Value_Ranges) bool {
	for _, r := range rs.GetRange() {
		if r.Begin <= n && n <= r.End {
			return true
		}
	}
	return false
}

func rangesString(rs *mesos.Value_Ranges) string {
	parts := make([]string, 0, len(rs.GetRange()))
	for _, r := range rs.GetRange() {
		parts = append(parts, fmt.Sprintf("%d-%d", r.Begin, r.End))
	}
	return "[" + strings.Join(parts, ",") + "]"
}
