package jsonlines_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/formats"
	"github.com/flint-mesos/flint/framework/formats/jsonlines"
	_ "github.com/flint-mesos/flint/framework/local"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

const splitBytes = 16 << 10

func TestMain(m *testing.M) {
	threemode.Configure(fmt.Sprintf("flint.files.maxPartitionBytes=%d", splitBytes), "flint.files.openCostInBytes=1024")
	threemode.Main(m)
}

type event struct {
	ID     int64            `json:"id"`
	User   string           `json:"user"`
	Amount float64          `json:"amount"`
	Tags   []string         `json:"tags,omitempty"`
	Bad    *formats.Corrupt `json:"-"`
}

func makeEvent(i int64) event {
	e := event{ID: i, User: fmt.Sprintf("user \"%d\"\t<%d>", i%13, i%7), Amount: float64(i) / 8}
	if i%4 == 0 {
		e.Tags = []string{"a", fmt.Sprint(i)}
	}
	return e
}

func events(lo, hi int64) []event {
	var out []event
	for i := lo; i < hi; i++ {
		out = append(out, makeEvent(i))
	}
	return out
}

type readArgs struct {
	Paths []string
	Mode  formats.Mode
}

type readOut struct {
	Rows    []event
	Parts   int
	Dropped int64
}

var readJob = dataset.JobResult("jsonlines.test.read", func(b *dataset.Builder, a readArgs) (readOut, error) {
	dropped := dataset.Counter(b, "malformed lines")
	ds := jsonlines.Read[event](b, jsonlines.Options{Mode: a.Mode, Dropped: dropped}, a.Paths...)
	rows, err := dataset.Collect(ds)
	slices.SortFunc(rows, func(x, y event) int { return int(x.ID - y.ID) })
	return readOut{Rows: rows, Parts: ds.Partitions(), Dropped: dropped.Value()}, err
})

type saveArgs struct {
	N, Parts int
	Out      string
	Codec    string
}

var saveJob = dataset.Job("jsonlines.test.save", func(b *dataset.Builder, a saveArgs) error {
	rows := dataset.Map(dataset.Range(b, 0, int64(a.N), a.Parts), makeEvent)
	var opts []dataset.SaveOption
	if a.Codec != "" {
		opts = append(opts, dataset.Compress(a.Codec))
	}
	return jsonlines.Save(rows, a.Out, opts...)
})

// jsonText is rows as JSON lines, by encoding/json.
func jsonText(t *testing.T, rows []event) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, e := range rows {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func sameEvents(t *testing.T, got, want []event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d records, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.User != w.User || g.Amount != w.Amount || !slices.Equal(g.Tags, w.Tags) || (g.Bad == nil) != (w.Bad == nil) {
			t.Fatalf("record %d = %+v, want %+v", i, g, w)
		}
	}
}

// Save writes JSON lines, compressed or not, one part per partition and _SUCCESS; Read
// reads back every record once, the files cut into many splits.
func TestSaveAndReadBack(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		for _, c := range []struct{ codec, ext string }{{"", ".json"}, {"zstd", ".json.zst"}} {
			out := filepath.Join(t.TempDir(), "out")
			if _, err := saveJob.Run(t.Context(), fc, saveArgs{N: 4000, Parts: 2, Out: out, Codec: c.codec}); err != nil {
				t.Fatal(err)
			}
			var names []string
			entries, _ := os.ReadDir(out)
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if want := []string{"_SUCCESS", "part-00000" + c.ext, "part-00001" + c.ext}; !slices.Equal(names, want) {
				t.Fatalf("%s holds %v, want %v", out, names, want)
			}
			got, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{out}})
			if err != nil {
				t.Fatal(err)
			}
			sameEvents(t, got.Rows, events(0, 4000))
			if c.codec == "" && got.Parts < 6 {
				t.Fatalf("%d partitions: the files were not split", got.Parts)
			}
		}
	})
}

// badLines replace records: a value of the wrong type, a JSON value that is not an object
// (null included), broken JSON.
var badLines = map[int64]string{
	10:   `{"id": 10, "user": "ann", "amount": "ten"}`,
	900:  `{"id": "nine hundred", "user": "bob", "amount": 1}`,
	1500: `[1500, "carl"]`,
	2100: `null`,
	2999: `{"id": 2999, "user": "dan"`,
}

// mixedFile writes records 0..n with badLines in their places, and blank lines; it returns
// the good records and the bad lines by line number.
func mixedFile(t *testing.T, path string, n int64, bad map[int64]string) ([]event, map[int64]string) {
	t.Helper()
	var buf bytes.Buffer
	var good []event
	lines := map[int64]string{}
	line := int64(0)
	for i := int64(0); i < n; i++ {
		line++
		if s, ok := bad[i]; ok {
			buf.WriteString(s + "\n")
			lines[line] = s
			continue
		}
		buf.Write(jsonText(t, []event{makeEvent(i)}))
		good = append(good, makeEvent(i))
		if i%500 == 0 {
			buf.WriteString("  \n")
			line++
		}
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return good, lines
}

// A line of the wrong type under each mode: FailFast fails naming the file and line;
// DropMalformed skips and counts each; Permissive keeps each marked, with the fields that
// did decode set.
func TestWrongTypeLinesUnderEachMode(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		dir := t.TempDir()
		one := filepath.Join(dir, "one.json")
		_, lines := mixedFile(t, one, 3000, map[int64]string{2400: badLines[900]})
		_, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{one}})
		for line := range lines {
			want := fmt.Sprintf(`%s:%d: malformed record: json: cannot unmarshal string into Go struct field event.id of type int64`, one, line)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("FailFast: err = %v, want it to hold %q", err, want)
			}
		}

		many := filepath.Join(dir, "many.json")
		good, lines := mixedFile(t, many, 3000, badLines)
		got, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{many}, Mode: formats.DropMalformed})
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, got.Rows, good)
		if got.Dropped != int64(len(badLines)) {
			t.Fatalf("dropped %d, want %d", got.Dropped, len(badLines))
		}

		got, err = readJob.Run(t.Context(), fc, readArgs{Paths: []string{many}, Mode: formats.Permissive})
		if err != nil {
			t.Fatal(err)
		}
		var kept []event
		marked := map[int64]string{}
		for _, r := range got.Rows {
			if r.Bad == nil {
				kept = append(kept, r)
				continue
			}
			if r.Bad.File != many || r.Bad.Reason == "" {
				t.Fatalf("corrupt mark %+v", r.Bad)
			}
			marked[r.Bad.Line] = r.Bad.Record
			if r.Bad.Record == badLines[10] && (r.ID != 10 || r.User != "ann") {
				t.Fatalf("Permissive kept %+v, want the fields that decoded (id 10, user ann)", r)
			}
		}
		sameEvents(t, kept, good)
		if fmt.Sprint(marked) != fmt.Sprint(lines) {
			t.Fatalf("marked lines %v, want %v", marked, lines)
		}
	})
}
