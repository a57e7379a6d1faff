// Command scaleplot draws the simulation's scale figures (docs/sim-scale.csv:
// the rows of docs/benchmarks.md's table, as TestScale measured them) as
// an SVG of three panels against the agents on a log scale — CPU seconds
// per 1,000 task attempts, peak heap in use, map-output tracker bytes per
// map output — one line per series (the csv's first column):
//
//	go run ./internal/devtools/sim/scaleplot -in docs/sim-scale.csv -out docs/sim-scale.svg
package main

import (
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
)

// row is one measured run.
type row struct {
	series string
	agents float64
	values [3]float64 // CPU s per 1,000 attempts, peak heap MiB, tracker bytes per map output
}

var panels = [3]string{"CPU s per 1,000 attempts", "peak heap in use (MiB)", "tracker bytes per map output"}

func main() {
	in := flag.String("in", "docs/sim-scale.csv", "measured rows: series,agents,cpu_per_1000,peak_heap_mib,tracker_bytes_per_output")
	out := flag.String("out", "docs/sim-scale.svg", "the SVG to write")
	flag.Parse()
	f, err := os.Open(*in)
	if err != nil {
		log.Fatal(err)
	}
	rows, err := read(f)
	f.Close()
	if err != nil {
		log.Fatalf("%s: %v", *in, err)
	}
	if err := os.WriteFile(*out, []byte(svg(rows)), 0o644); err != nil {
		log.Fatal(err)
	}
}

// read parses the csv (a header line first); a bad row is an error naming it.
func read(r io.Reader) ([]row, error) {
	recs, err := csv.NewReader(r).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("scaleplot: %w", err)
	}
	if len(recs) < 2 {
		return nil, errors.New("scaleplot: no rows after the header")
	}
	var rows []row
	for i, rec := range recs[1:] {
		if len(rec) != 5 {
			return nil, fmt.Errorf("scaleplot: line %d: %d fields, want 5", i+2, len(rec))
		}
		var nums [4]float64
		for j := range nums {
			v, err := strconv.ParseFloat(strings.TrimSpace(rec[j+1]), 64)
			if err != nil || v <= 0 {
				return nil, fmt.Errorf("scaleplot: line %d field %d: %q is not a positive number", i+2, j+2, rec[j+1])
			}
			nums[j] = v
		}
		rows = append(rows, row{series: strings.TrimSpace(rec[0]), agents: nums[0], values: [3]float64{nums[1], nums[2], nums[3]}})
	}
	return rows, nil
}

const (
	panelW, panelH = 300.0, 220.0
	left, top      = 60.0, 40.0
	gap            = 70.0
)

var colors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}

// svg draws the panels: x is log10(agents), y linear from 0 to the
// panel's largest value.
func svg(rows []row) string {
	var series []string
	for _, r := range rows {
		if !slices.Contains(series, r.series) {
			series = append(series, r.series)
		}
	}
	xmin, xmax := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		xmin, xmax = min(xmin, math.Log10(r.agents)), max(xmax, math.Log10(r.agents))
	}
	if xmax == xmin {
		xmax = xmin + 1
	}
	width := left + 3*panelW + 2*gap + 20
	height := top + panelH + 60 + 18*float64(len(series))
	var b strings.Builder
	fmt.Fprintf(&b, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n", width, height)
	fmt.Fprintf(&b, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n")
	for p, title := range panels {
		x0 := left + float64(p)*(panelW+gap)
		ymax := 0.0
		for _, r := range rows {
			ymax = max(ymax, r.values[p])
		}
		ymax *= 1.1
		px := func(a float64) float64 { return x0 + (math.Log10(a)-xmin)/(xmax-xmin)*panelW }
		py := func(v float64) float64 { return top + panelH - v/ymax*panelH }
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" font-weight=\"bold\">%s</text>\n", x0, top-12, title)
		fmt.Fprintf(&b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#888\"/>\n", x0, top, panelW, panelH)
		for k := 0; k <= 4; k++ {
			v := ymax * float64(k) / 4
			fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n", x0-4, py(v)+4, label(v))
		}
		for e := math.Ceil(xmin); e <= xmax+1e-9; e++ {
			a := math.Pow(10, e)
			fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", px(a), top, px(a), top+panelH)
			fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n", px(a), top+panelH+14, label(a))
		}
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">agents × 8 slots</text>\n", x0+panelW/2, top+panelH+30)
		for s, name := range series {
			var pts []string
			for _, r := range rows {
				if r.series == name {
					pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(r.agents), py(r.values[p])))
				}
			}
			c := colors[s%len(colors)]
			fmt.Fprintf(&b, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"/>\n", strings.Join(pts, " "), c)
			for _, pt := range pts {
				x, y, _ := strings.Cut(pt, ",")
				fmt.Fprintf(&b, "<circle cx=\"%s\" cy=\"%s\" r=\"3\" fill=\"%s\"/>\n", x, y, c)
			}
		}
	}
	for s, name := range series {
		y := top + panelH + 50 + 18*float64(s)
		fmt.Fprintf(&b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n", left, y-4, left+24, y-4, colors[s%len(colors)])
		fmt.Fprintf(&b, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", left+30, y, escape(name))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// label is a tick's value, short.
func label(v float64) string {
	switch {
	case v >= 1000:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 10:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case v >= 1:
		return strconv.FormatFloat(v, 'f', 1, 64)
	}
	return strconv.FormatFloat(v, 'f', 2, 64)
}

func escape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}
