package webui

import (
	"fmt"
	"sort"

	"github.com/flint-mesos/flint/framework/uistore"
)

// dag is a job's stage graph laid out for SVG: stages in columns by depth
// (a stage sits right of every parent), edges from parent to child.
type dag struct {
	Width, Height int
	Nodes         []dagNode
	Edges         []dagEdge
}

type dagNode struct {
	ID                       int
	Status, Label, Link      string
	Current                  bool
	X, Y, W, H, TX, TY1, TY2 int
}

type dagEdge struct {
	From, To       int
	X1, Y1, X2, Y2 int
}

const (
	nodeW, nodeH = 150, 44
	colGap       = 60
	rowGap       = 16
	margin       = 8
)

// layoutDAG places stages (one job's) by depth; current is highlighted.
func layoutDAG(stages []uistore.StageData, current int, base string) dag {
	byID := map[int]uistore.StageData{}
	for _, s := range stages {
		byID[s.StageID] = s
	}
	depth := map[int]int{}
	var depthOf func(id int, seen map[int]bool) int
	depthOf = func(id int, seen map[int]bool) int {
		if d, ok := depth[id]; ok {
			return d
		}
		if seen[id] { // a cycle cannot come from a DAG scheduler; draw it flat
			return 0
		}
		seen[id] = true
		d := 0
		for _, p := range byID[id].ParentIDs {
			if _, ok := byID[p]; ok {
				d = max(d, depthOf(p, seen)+1)
			}
		}
		depth[id] = d
		return d
	}
	cols := map[int][]int{}
	maxDepth, maxRows := 0, 0
	for _, s := range stages {
		d := depthOf(s.StageID, map[int]bool{})
		cols[d] = append(cols[d], s.StageID)
		maxDepth = max(maxDepth, d)
	}
	pos := map[int][2]int{}
	var g dag
	for d := 0; d <= maxDepth; d++ {
		sort.Ints(cols[d])
		maxRows = max(maxRows, len(cols[d]))
		for row, id := range cols[d] {
			x, y := margin+d*(nodeW+colGap), margin+row*(nodeH+rowGap)
			pos[id] = [2]int{x, y}
			s := byID[id]
			g.Nodes = append(g.Nodes, dagNode{ID: id, Status: s.Status, Label: truncate(s.Name, 20) + " · " + fmt.Sprint(s.NumTasks) + " tasks",
				Link: fmt.Sprintf("%sstages/stage/?id=%d&attempt=%d", base, id, s.AttemptID), Current: id == current,
				X: x, Y: y, W: nodeW, H: nodeH, TX: x + 8, TY1: y + 18, TY2: y + 35})
		}
	}
	for _, s := range stages {
		for _, p := range s.ParentIDs {
			from, ok := pos[p]
			if !ok {
				continue
			}
			to := pos[s.StageID]
			g.Edges = append(g.Edges, dagEdge{From: p, To: s.StageID, X1: from[0] + nodeW, Y1: from[1] + nodeH/2, X2: to[0], Y2: to[1] + nodeH/2})
		}
	}
	if len(g.Nodes) > 0 {
		g.Width = 2*margin + (maxDepth+1)*nodeW + maxDepth*colGap
		g.Height = 2*margin + maxRows*nodeH + (maxRows-1)*rowGap
	}
	return g
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
