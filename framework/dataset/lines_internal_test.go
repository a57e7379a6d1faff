package dataset

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// The line cutter gives every line exactly once, whatever its length (empty, around a
// read's least room, around a chunk, several chunks long) and however the reads fall, and
// a line cut earlier keeps its bytes while later lines are read into the same and new
// chunks.
func TestLineCutterCutsEveryLineAndNeverRewritesOne(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	lengths := []int{0, 1, minRead - 1, minRead, minRead + 1, lineChunk - 1, lineChunk, lineChunk + 1, 3*lineChunk + 7}
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
	c := lineCutter{r: &choppyReader{r: strings.NewReader(text), rand: r}}
	var got []string
	total := 0
	for {
		s, n, err := c.next()
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

// choppyReader reads at most a random number of bytes at a time (up to 2 chunks), as a
// network connection does.
type choppyReader struct {
	r    io.Reader
	rand *rand.Rand
}

func (c *choppyReader) Read(b []byte) (int, error) {
	return c.r.Read(b[:min(len(b), 1+c.rand.IntN(2*lineChunk))])
}
