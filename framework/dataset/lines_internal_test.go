package dataset

import (
	"bufio"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// The line arena gives every line exactly once, whatever its length (empty, around the
// arena's short-line limit, longer than a chunk, longer than the reader's buffer), and a
// line cut earlier keeps its bytes while later lines fill the same and new chunks.
func TestLineArenaCutsEveryLineAndNeverRewritesOne(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lengths := []int{0, 1, arenaChunk/8 - 1, arenaChunk / 8, arenaChunk/8 + 1, arenaChunk - 1, arenaChunk, 300 << 10}
	var want []string
	for i := range 20000 {
		n := r.IntN(200)
		if i%97 == 0 {
			n = lengths[r.IntN(len(lengths))]
		}
		b := make([]byte, n)
		for j := range b {
			b[j] = 'a' + byte(r.IntN(26))
		}
		want = append(want, string(b))
	}
	text := strings.Join(want, "\n") // the last line has no '\n'
	rd := bufio.NewReaderSize(strings.NewReader(text), 256<<10)
	var a lineArena
	var got []string
	total := 0
	for {
		s, n, err := a.readLine(rd)
		total += n
		if n > 0 {
			got = append(got, s)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if total != len(text) {
		t.Fatalf("the lines took %d bytes, the text has %d", total, len(text))
	}
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("line %d: %d bytes %.20q…, want %d bytes %.20q…", i, len(got[i]), got[i], len(want[i]), want[i])
		}
	}
}
