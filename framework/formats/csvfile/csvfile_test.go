package csvfile_test

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/formats"
	"github.com/flint-mesos/flint/framework/formats/csvfile"
	_ "github.com/flint-mesos/flint/framework/local"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// splitBytes is every mode's flint.files.maxPartitionBytes: the test files are cut into
// many splits.
const splitBytes = 16 << 10

func TestMain(m *testing.M) {
	threemode.Configure(fmt.Sprintf("flint.files.maxPartitionBytes=%d", splitBytes), "flint.files.openCostInBytes=1024")
	threemode.Main(m)
}

type event struct {
	ID     int64   `csv:"id"`
	User   string  `csv:"user"`
	Amount float64 `csv:"amount"`
	When   time.Time
	Note   *string `csv:"note"`
	Bad    *formats.Corrupt
}

type plain struct {
	ID   int64 `csv:"id"`
	User string
}

type readArgs struct {
	Paths  []string
	Header bool
	Comma  rune
	Mode   formats.Mode
}

type readOut struct {
	Rows    []event
	Parts   int
	Dropped int64
}

var readJob = dataset.JobResult("csvfile.test.read", func(b *dataset.Builder, a readArgs) (readOut, error) {
	dropped := dataset.Counter(b, "malformed rows")
	ds := csvfile.Read[event](b, csvfile.Options{Header: a.Header, Comma: a.Comma, Mode: a.Mode, Dropped: dropped}, a.Paths...)
	rows, err := dataset.Collect(ds)
	slices.SortFunc(rows, func(x, y event) int { return int(x.ID - y.ID) })
	return readOut{Rows: rows, Parts: ds.Partitions(), Dropped: dropped.Value()}, err
})

var readPlainJob = dataset.JobResult("csvfile.test.readPlain", func(b *dataset.Builder, a readArgs) (int64, error) {
	return dataset.Count(csvfile.Read[plain](b, csvfile.Options{Header: a.Header, Mode: a.Mode}, a.Paths...))
})

type saveArgs struct {
	N, Parts int
	Out      string
	Codec    string
	Comma    rune
}

var saveJob = dataset.Job("csvfile.test.save", func(b *dataset.Builder, a saveArgs) error {
	rows := dataset.Map(dataset.Range(b, 0, int64(a.N), a.Parts), makeEvent)
	var opts []dataset.SaveOption
	if a.Codec != "" {
		opts = append(opts, dataset.Compress(a.Codec))
	}
	return csvfile.Save(rows, a.Out, csvfile.Options{Header: true, Comma: a.Comma}, opts...)
})

var base = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// makeEvent is event i, as the tests expect it back.
func makeEvent(i int64) event {
	e := event{ID: i, User: fmt.Sprintf("user, \"%d\"", i%17), Amount: float64(i) * 0.25, When: base.Add(time.Duration(i) * time.Second)}
	if i%3 == 0 {
		s := fmt.Sprintf("note %d", i)
		e.Note = &s
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

// record is e as a CSV row in the column order of header (plain Go, not the package).
func record(e event, header []string) []string {
	var out []string
	for _, h := range header {
		switch strings.ToLower(h) {
		case "id":
			out = append(out, strconv.FormatInt(e.ID, 10))
		case "user":
			out = append(out, e.User)
		case "amount":
			out = append(out, strconv.FormatFloat(e.Amount, 'f', -1, 64))
		case "when":
			out = append(out, e.When.Format(time.RFC3339))
		case "note":
			if e.Note != nil {
				out = append(out, *e.Note)
			} else {
				out = append(out, "")
			}
		default:
			out = append(out, "extra")
		}
	}
	return out
}

// csvText is the rows as CSV with comma, headed by header when withHeader.
func csvText(t *testing.T, rows []event, header []string, withHeader bool, comma rune) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Comma = comma
	if withHeader {
		w.Write(header)
	}
	for _, e := range rows {
		w.Write(record(e, header))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipped(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func write(t *testing.T, path string, b []byte) string {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func sameEvents(t *testing.T, got, want []event) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("read %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.User != w.User || g.Amount != w.Amount || !g.When.Equal(w.When) ||
			(g.Note == nil) != (w.Note == nil) || g.Note != nil && *g.Note != *w.Note || (g.Bad == nil) != (w.Bad == nil) {
			t.Fatalf("row %d = %+v, want %+v", i, g, w)
		}
	}
}

// Files with headers in another column order (one name in another case, an extra column),
// one gzipped, are read into T by name, each split of a file knowing the header; a TSV
// without header is read by position. Both are cut into many splits.
func TestReadByHeaderAndByPosition(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		dir := t.TempDir()
		a := write(t, filepath.Join(dir, "a.csv"), csvText(t, events(0, 2000), []string{"note", "AMOUNT", "id", "extra", "When", "user"}, true, ','))
		b := write(t, filepath.Join(dir, "b.csv.gz"), gzipped(t, csvText(t, events(2000, 2500), []string{"id", "user", "amount", "When", "note"}, true, ',')))
		if st, _ := os.Stat(a); st.Size() < 4*splitBytes {
			t.Fatalf("a.csv is %d bytes: too small to split", st.Size())
		}
		got, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{a, b}, Header: true})
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, got.Rows, events(0, 2500))
		if got.Parts < 5 {
			t.Fatalf("%d partitions: the file was not split", got.Parts)
		}

		tsv := write(t, filepath.Join(dir, "c.tsv"), csvText(t, events(0, 1500), []string{"id", "user", "amount", "When", "note"}, false, '\t'))
		got, err = readJob.Run(t.Context(), fc, readArgs{Paths: []string{tsv}, Comma: '\t'})
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, got.Rows, events(0, 1500))
	})
}

// malformedFile is a CSV file of rows 0..n with bad rows replacing the rows at the given
// indexes, and the line (1-based, after the header) and text of each bad row.
func malformedFile(t *testing.T, path string, n int64, bad map[int64]string) (good []event, lines map[int64]string) {
	t.Helper()
	header := []string{"id", "user", "amount", "When", "note"}
	var buf bytes.Buffer
	buf.Write(csvText(t, nil, header, true, ','))
	lines = map[int64]string{}
	for i := int64(0); i < n; i++ {
		if s, ok := bad[i]; ok {
			buf.WriteString(s + "\n")
			lines[i+2] = s
			continue
		}
		buf.Write(csvText(t, []event{makeEvent(i)}, header, false, ','))
		good = append(good, makeEvent(i))
	}
	write(t, path, buf.Bytes())
	return good, lines
}

// A malformed row under each mode: FailFast fails naming the file and the row's line (in a
// split far into the file); DropMalformed skips it and counts it once; Permissive keeps it,
// marked with its file, line, text and reason, the other rows unmarked.
func TestMalformedRowsUnderEachMode(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		dir := t.TempDir()
		one := filepath.Join(dir, "one.csv")
		_, lines := malformedFile(t, one, 3000, map[int64]string{2400: `2400,bob,not-a-number,2026-03-01T12:00:00Z,`})
		_, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{one}, Header: true})
		for line := range lines {
			want := fmt.Sprintf("%s:%d: malformed record: column amount: \"not-a-number\" is not a float64", one, line)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("FailFast: err = %v, want it to hold %q", err, want)
			}
		}

		many := filepath.Join(dir, "many.csv")
		bad := map[int64]string{
			5:    `5,ann`,                                 // too few fields
			1200: `1200,"unterminated,1.5,2026-03-01,`,    // a quote never closed
			2999: `2999,carl,1.5,yesterday,,one too many`, // too many fields
			2500: `2500,dan,2.5,2026-03-01T12:00:00Z,x`,   // well-formed after all
		}
		delete(bad, 2500)
		good, lines := malformedFile(t, many, 3000, bad)
		got, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{many}, Header: true, Mode: formats.DropMalformed})
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, got.Rows, good)
		if got.Dropped != int64(len(bad)) {
			t.Fatalf("dropped %d, want %d", got.Dropped, len(bad))
		}

		got, err = readJob.Run(t.Context(), fc, readArgs{Paths: []string{many}, Header: true, Mode: formats.Permissive})
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Rows) != 3000 {
			t.Fatalf("Permissive read %d rows, want 3000", len(got.Rows))
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
		}
		sameEvents(t, kept, good)
		if fmt.Sprint(marked) != fmt.Sprint(lines) {
			t.Fatalf("marked rows %v, want %v", marked, lines)
		}
	})
}

// Save writes one part per partition with a header, compressed or not, and _SUCCESS; Read
// reads back every row once.
func TestSaveRoundTrip(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		for _, c := range []struct {
			codec, ext string
			comma      rune
		}{{"", ".csv", ','}, {"gzip", ".csv.gz", ','}, {"", ".tsv", '\t'}} {
			out := filepath.Join(t.TempDir(), "out")
			if _, err := saveJob.Run(t.Context(), fc, saveArgs{N: 3000, Parts: 3, Out: out, Codec: c.codec, Comma: c.comma}); err != nil {
				t.Fatal(err)
			}
			var names []string
			entries, _ := os.ReadDir(out)
			for _, e := range entries {
				names = append(names, e.Name())
			}
			want := []string{"_SUCCESS", "part-00000" + c.ext, "part-00001" + c.ext, "part-00002" + c.ext}
			if !slices.Equal(names, want) {
				t.Fatalf("%s holds %v, want %v", out, names, want)
			}
			got, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{out}, Header: true, Comma: c.comma})
			if err != nil {
				t.Fatal(err)
			}
			sameEvents(t, got.Rows, events(0, 3000))
		}
	})
}

// A file lacking a column of T fails the job at planning, naming the file and the column;
// Permissive without a *formats.Corrupt field in T is refused.
func TestPlanningErrors(t *testing.T) {
	threemode.RunIn(t, []threemode.Mode{threemode.Local}, func(t *testing.T, fc *framework.Context) {
		dir := t.TempDir()
		ok := write(t, filepath.Join(dir, "ok.csv"), []byte("id,User\n1,ann\n"))
		lacking := write(t, filepath.Join(dir, "lacking.csv"), []byte("id,name\n1,ann\n"))
		_, err := readPlainJob.Run(t.Context(), fc, readArgs{Paths: []string{ok, lacking}, Header: true})
		want := fmt.Sprintf(`csvfile: %s: no column "User" for field of type string (the header has id, name)`, lacking)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		_, err = readPlainJob.Run(t.Context(), fc, readArgs{Paths: []string{ok}, Header: true, Mode: formats.Permissive})
		if err == nil || !strings.Contains(err.Error(), "Permissive needs a field of type *formats.Corrupt in csvfile_test.plain") {
			t.Fatalf("err = %v", err)
		}
		n, err := readPlainJob.Run(t.Context(), fc, readArgs{Paths: []string{ok}, Header: true})
		if err != nil || n != 1 {
			t.Fatalf("count = %d, %v", n, err)
		}
	})
}
