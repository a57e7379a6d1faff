package parquetfile_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/formats/parquetfile"
	_ "github.com/flint-mesos/flint/framework/local"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// Every row group is a split of its own.
func TestMain(m *testing.M) {
	threemode.Configure("flint.files.maxPartitionBytes=1024", "flint.files.openCostInBytes=0")
	threemode.Main(m)
}

type event struct {
	ID     int64   `parquet:"id"`
	User   string  `parquet:"user"`
	Amount float64 `parquet:"amount"`
	Count  int32   `parquet:"count"`
	Flag   bool    `parquet:"flag"`
	Note   *string `parquet:"note,optional"`
}

// narrow is two of event's six columns.
type narrow struct {
	User string `parquet:"user"`
	ID   int64  `parquet:"id"`
}

func makeEvent(i int64) event {
	e := event{ID: i, User: fmt.Sprintf("user-%d", i%11), Amount: float64(i) * 1.5, Count: int32(i % 7), Flag: i%2 == 0}
	if i%5 == 0 {
		s := fmt.Sprint("note ", i)
		e.Note = &s
	}
	return e
}

type saveArgs struct {
	N, Parts    int
	Out         string
	Compression string
}

var saveJob = dataset.Job("parquetfile.test.save", func(b *dataset.Builder, a saveArgs) error {
	rows := dataset.Map(dataset.Range(b, 0, int64(a.N), a.Parts), makeEvent)
	return parquetfile.Save(rows, a.Out, parquetfile.SaveOptions{Compression: a.Compression, RowGroupRows: 500})
})

type readArgs struct {
	Paths    []string
	Lo, Hi   int64
	Filtered bool
}

type readOut[T any] struct {
	Rows  []T
	Parts int
}

var readJob = dataset.JobResult("parquetfile.test.read", func(b *dataset.Builder, a readArgs) (readOut[event], error) {
	var o parquetfile.Options
	if a.Filtered {
		o.Filter = &parquetfile.Filter{Column: "id", Min: a.Lo, Max: a.Hi}
	}
	ds := parquetfile.Read[event](b, o, a.Paths...)
	rows, err := dataset.Collect(ds)
	slices.SortFunc(rows, func(x, y event) int { return int(x.ID - y.ID) })
	return readOut[event]{Rows: rows, Parts: ds.Partitions()}, err
})

var readNarrowJob = dataset.JobResult("parquetfile.test.readNarrow", func(b *dataset.Builder, a readArgs) (readOut[narrow], error) {
	ds := parquetfile.Read[narrow](b, parquetfile.Options{}, a.Paths...)
	rows, err := dataset.Collect(ds)
	slices.SortFunc(rows, func(x, y narrow) int { return int(x.ID - y.ID) })
	return readOut[narrow]{Rows: rows, Parts: ds.Partitions()}, err
})

func sameEvents(t *testing.T, got []event, ids []int64) {
	t.Helper()
	if len(got) != len(ids) {
		t.Fatalf("read %d rows, want %d", len(got), len(ids))
	}
	for i, id := range ids {
		g, w := got[i], makeEvent(id)
		if g.ID != w.ID || g.User != w.User || g.Amount != w.Amount || g.Count != w.Count || g.Flag != w.Flag ||
			(g.Note == nil) != (w.Note == nil) || g.Note != nil && *g.Note != *w.Note {
			t.Fatalf("row %d = %+v, want %+v", i, g, w)
		}
	}
}

func ids(lo, hi int64) []int64 {
	var out []int64
	for i := lo; i < hi; i++ {
		out = append(out, i)
	}
	return out
}

// Save writes one Parquet file per partition (row groups of 500 rows) with snappy or zstd;
// Read reads every row back, one split per row group; a struct of two of the six columns
// reads those; a filter on id reads only the two row groups whose statistics overlap it,
// and only its rows.
func TestSaveReadProjectFilter(t *testing.T) {
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		for _, comp := range []string{"snappy", "zstd"} {
			out := filepath.Join(t.TempDir(), "out")
			if _, err := saveJob.Run(t.Context(), fc, saveArgs{N: 6000, Parts: 2, Out: out, Compression: comp}); err != nil {
				t.Fatal(err)
			}
			var names []string
			entries, _ := os.ReadDir(out)
			for _, e := range entries {
				names = append(names, e.Name())
			}
			if want := []string{"_SUCCESS", "part-00000.parquet", "part-00001.parquet"}; !slices.Equal(names, want) {
				t.Fatalf("%s holds %v, want %v", out, names, want)
			}
			checkCodec(t, filepath.Join(out, "part-00000.parquet"), comp)

			got, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{out}})
			if err != nil {
				t.Fatal(err)
			}
			sameEvents(t, got.Rows, ids(0, 6000))
			if got.Parts != 12 {
				t.Fatalf("%d splits, want one per row group: 12", got.Parts)
			}

			nw, err := readNarrowJob.Run(t.Context(), fc, readArgs{Paths: []string{out}})
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range nw.Rows {
				if w := makeEvent(int64(i)); r.ID != w.ID || r.User != w.User {
					t.Fatalf("narrow row %d = %+v", i, r)
				}
			}
			if len(nw.Rows) != 6000 {
				t.Fatalf("narrow: %d rows", len(nw.Rows))
			}

			got, err = readJob.Run(t.Context(), fc, readArgs{Paths: []string{out}, Filtered: true, Lo: 1200, Hi: 1899})
			if err != nil {
				t.Fatal(err)
			}
			sameEvents(t, got.Rows, ids(1200, 1900))
			if got.Parts != 2 {
				t.Fatalf("filtered read planned %d splits, want the 2 row groups holding ids 1000-1999", got.Parts)
			}
		}
	})
}

// checkCodec asserts every column chunk of the file is compressed with comp.
func checkCodec(t *testing.T, path, comp string) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	for _, rg := range pf.Metadata().RowGroups {
		for _, c := range rg.Columns {
			if got := strings.ToLower(c.MetaData.Codec.String()); got != comp {
				t.Fatalf("%s: a column chunk is %s, want %s", path, got, comp)
			}
		}
	}
}

type wrongType struct {
	ID     string  `parquet:"id"`
	User   string  `parquet:"user"`
	Amount float64 `parquet:"amount"`
	Count  int32   `parquet:"count"`
	Flag   bool    `parquet:"flag"`
	Note   *string `parquet:"note,optional"`
}

type lacking struct {
	ID int64 `parquet:"id"`
}

func writeFile[T any](t *testing.T, path string, rows []T) {
	t.Helper()
	if err := parquet.WriteFile(path, rows); err != nil {
		t.Fatal(err)
	}
}

// A file whose schema lacks a column of T, or has one with another type, fails the job at
// planning with one error naming the file, the column and both types.
func TestSchemaMismatchFailsAtPlanning(t *testing.T) {
	threemode.RunIn(t, []threemode.Mode{threemode.Local}, func(t *testing.T, fc *framework.Context) {
		dir := t.TempDir()
		ok := filepath.Join(dir, "ok.parquet")
		writeFile(t, ok, []event{makeEvent(1)})
		wrong := filepath.Join(dir, "wrong.parquet")
		writeFile(t, wrong, []wrongType{{ID: "x"}})
		short := filepath.Join(dir, "short.parquet")
		writeFile(t, short, []lacking{{ID: 1}})

		_, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{ok, wrong}})
		want := fmt.Sprintf(`parquetfile: %s: column "id" is BYTE_ARRAY (STRING) in the file but INT64 in T`, wrong)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		_, err = readJob.Run(t.Context(), fc, readArgs{Paths: []string{short}})
		want = fmt.Sprintf(`parquetfile: %s has no column "user" (T has it as BYTE_ARRAY (STRING); the file's columns: id)`, short)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want %q", err, want)
		}
		got, err := readJob.Run(t.Context(), fc, readArgs{Paths: []string{ok}})
		if err != nil {
			t.Fatal(err)
		}
		sameEvents(t, got.Rows, []int64{1})
	})
}
