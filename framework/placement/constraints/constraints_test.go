package constraints

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestParse(t *testing.T) {
	tests := []struct {
		in   string
		want Constraints
	}{
		{"", nil},
		{"   ", nil},
		{"os", Constraints{{Attribute: "os"}}},
		{"os:centos7", Constraints{{Attribute: "os", Values: []string{"centos7"}}}},
		{"zone:us-east-1a,us-east-1b;gpu", Constraints{
			{Attribute: "zone", Values: []string{"us-east-1a", "us-east-1b"}},
			{Attribute: "gpu"},
		}},
		{" rack : r1 , r2 ; cpus:4.5", Constraints{
			{Attribute: "rack", Values: []string{"r1", "r2"}},
			{Attribute: "cpus", Values: []string{"4.5"}},
		}},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Parse(%q) = %#v, want %#v", tt.in, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct {
		in      string
		offset  int
		msgPart string
	}{
		{"os:centos;;zone:a", 10, "empty term"},
		{";os", 0, "empty term"},
		{"os;", 3, "empty term"},
		{":linux", 0, "missing attribute name"},
		{"os:", 3, "empty value list"},
		{"zone:a,,b", 7, "empty value"},
		{"os:linux;zone:a:b", 15, "second ':'"},
		{"os:a;os:b", 5, "given twice"},
		{"a,b", 1, "',' in attribute name"},
	}
	for _, tt := range tests {
		_, err := Parse(tt.in)
		var se *SyntaxError
		if !errors.As(err, &se) || !errors.Is(err, ErrSyntax) {
			t.Errorf("Parse(%q) = %v, want a *SyntaxError", tt.in, err)
			continue
		}
		if se.Offset != tt.offset || !strings.Contains(err.Error(), tt.msgPart) {
			t.Errorf("Parse(%q): offset %d, error %q; want offset %d and %q", tt.in, se.Offset, err, tt.offset, tt.msgPart)
		}
		if !strings.Contains(err.Error(), se.Token) || !strings.HasPrefix(err.Error(), "constraints: ") {
			t.Errorf("Parse(%q): error %q does not name the token %q", tt.in, err, se.Token)
		}
	}
}

func text(name, v string) mesos.Attribute {
	return mesos.Attribute{Name: name, Type: mesos.TEXT, Text: &mesos.Value_Text{Value: v}}
}

func scalar(name string, v float64) mesos.Attribute {
	return mesos.Attribute{Name: name, Type: mesos.SCALAR, Scalar: &mesos.Value_Scalar{Value: v}}
}

func ranges(name string, rs ...mesos.Value_Range) mesos.Attribute {
	return mesos.Attribute{Name: name, Type: mesos.RANGES, Ranges: &mesos.Value_Ranges{Range: rs}}
}

func set(name string, items ...string) mesos.Attribute {
	return mesos.Attribute{Name: name, Type: mesos.SET, Set: &mesos.Value_Set{Item: items}}
}

func TestMatch(t *testing.T) {
	attrs := []mesos.Attribute{
		text("os", "centos7"),
		scalar("cpus", 4.5),
		ranges("ports", mesos.Value_Range{Begin: 100, End: 200}, mesos.Value_Range{Begin: 300, End: 300}),
		set("disks", "ssd", "nvme"),
	}
	tests := []struct {
		in    string
		match bool
		why   string
	}{
		{"", true, ""},
		{"os", true, ""},
		{"cpus;ports;disks", true, ""},
		{"rack", false, `attribute "rack" missing`},
		{"os:centos7", true, ""},
		{"os:ubuntu,centos7", true, ""},
		{"os:ubuntu", false, `attribute "os" is "centos7", want one of ubuntu`},
		{"cpus:4.5", true, ""},
		{"cpus:4.50", true, ""},
		{"cpus:4", true, ""},
		{"cpus:4.499", true, ""},
		{"cpus:0", true, ""},
		{"cpus:4.501", false, `scalar attribute "cpus" is 4.5, want at least one of 4.501`},
		{"cpus:5", false, `scalar attribute "cpus" is 4.5, want at least one of 5`},
		{"cpus:9,5", false, `want at least one of 9,5`},
		{"cpus:9,4", true, ""},
		{"cpus:1,4.5", true, ""},
		{"cpus:many", false, "want at least one of many"},
		{"ports:150", true, ""},
		{"ports:300", true, ""},
		{"ports:250", false, `range attribute "ports" is [100-200,300-300]`},
		{"ports:250,100", true, ""},
		{"ports:x", false, "want it to contain one of x"},
		{"disks:ssd", true, ""},
		{"disks:ssd,nvme", true, ""},
		{"disks:ssd,hdd", false, `lacks "hdd"`},
		{"os:centos7;disks:hdd;rack", false, `lacks "hdd"; attribute "rack" missing`},
	}
	for _, tt := range tests {
		cs, err := Parse(tt.in)
		if err != nil {
			t.Fatalf("Parse(%q): %v", tt.in, err)
		}
		if got := cs.Match(attrs); got != tt.match {
			t.Errorf("%q.Match = %v, want %v", tt.in, got, tt.match)
		}
		err = cs.Check(attrs)
		if (err == nil) != tt.match {
			t.Errorf("%q.Check = %v, want match=%v", tt.in, err, tt.match)
		}
		if err != nil && !strings.Contains(err.Error(), tt.why) {
			t.Errorf("%q.Check = %q, want it to contain %q", tt.in, err, tt.why)
		}
		var ue *UnmetError
		if err != nil && !errors.As(err, &ue) {
			t.Errorf("%q.Check returned %T, want *UnmetError", tt.in, err)
		}
	}
}

func TestRepeatedAttributeAnyMatches(t *testing.T) {
	cs, err := Parse("zone:b")
	if err != nil {
		t.Fatal(err)
	}
	if !cs.Match([]mesos.Attribute{text("zone", "a"), text("zone", "b")}) {
		t.Error("a second attribute of the same name should satisfy the constraint")
	}
}

func TestStringRoundTrip(t *testing.T) {
	in := " zone : a , b ;gpu; cpus:2"
	cs, err := Parse(in)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := cs.String(), "zone:a,b;gpu;cpus:2"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "os", "os:a,b;zone", "a:1;b:2,3", ";;", "a:b:c", "a:,", " x : y "} {
		f.Add(s)
	}
	attrs := []mesos.Attribute{text("os", "a"), scalar("a", 1), ranges("b", mesos.Value_Range{Begin: 1, End: 5}), set("zone", "x")}
	f.Fuzz(func(t *testing.T, s string) {
		cs, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("Parse(%q) error %T is not a *SyntaxError", s, err)
			}
			if se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("Parse(%q): offset %d out of range", s, se.Offset)
			}
			return
		}
		again, err := Parse(cs.String())
		if err != nil {
			t.Fatalf("Parse(String()) of %q: %v", cs.String(), err)
		}
		if !reflect.DeepEqual(cs, again) {
			t.Fatalf("round trip of %q: %#v != %#v", s, cs, again)
		}
		if cs.Match(attrs) != (cs.Check(attrs) == nil) {
			t.Fatalf("Match and Check disagree on %q", s)
		}
	})
}
