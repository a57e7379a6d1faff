package main

import (
	"strings"
	"testing"
)

// TestReadAndDraw: rows parse; a series becomes one polyline per panel
// with a point per row; a bad number is an error naming its line.
func TestReadAndDraw(t *testing.T) {
	rows, err := read(strings.NewReader("series,agents,cpu,heap,tracker\nA,100,0.5,400,50\nA,1000,1.0,900,55\nB,100,0.2,300,1300\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 || rows[1].agents != 1000 || rows[1].values != [3]float64{1.0, 900, 55} {
		t.Fatalf("rows %+v", rows)
	}
	out := svg(rows)
	if n := strings.Count(out, "<polyline"); n != 6 { // 2 series × 3 panels
		t.Errorf("%d polylines, want 6", n)
	}
	if n := strings.Count(out, "<circle"); n != 9 { // 3 rows × 3 panels
		t.Errorf("%d points, want 9", n)
	}
	if _, err := read(strings.NewReader("h\nA,100,x,1,1\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("bad number: %v", err)
	}
}
