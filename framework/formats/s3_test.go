package formats_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/formats"
	"github.com/flint-mesos/flint/framework/formats/csvfile"
	"github.com/flint-mesos/flint/framework/formats/jsonlines"
	"github.com/flint-mesos/flint/framework/formats/parquetfile"
	_ "github.com/flint-mesos/flint/framework/local"
	s3fs "github.com/flint-mesos/flint/framework/storage/s3"
	"github.com/flint-mesos/flint/internal/testkit/s3server"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// shared is the S3 server of the three-mode Contexts (TestMain starts it; every mode's
// Context reaches it with its configuration, the keys as executors' Mesos secrets).
var shared *s3server.Server

// sharedBucket is shared's bucket; each case writes under its own prefix.
const sharedBucket = "modes"

func TestMain(m *testing.M) {
	threemode.MainWith(m, func() (func() error, error) {
		os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
		srv, err := s3server.StartMain([]string{sharedBucket})
		if err != nil {
			return nil, err
		}
		shared = srv
		threemode.Configure(append(srv.Conf(), "flint.files.maxPartitionBytes=8192", "flint.files.openCostInBytes=0")...)
		return func() error { s3fs.CloseIdleConnections(); return srv.Close() }, nil
	})
}

type row struct {
	ID    int64   `csv:"id" json:"id" parquet:"id"`
	Name  string  `csv:"name" json:"name" parquet:"name"`
	Score float64 `csv:"score" json:"score" parquet:"score"`
}

func makeRow(i int64) row {
	return row{ID: i, Name: fmt.Sprintf("name, %d", i%23), Score: float64(i) / 4}
}

type args struct {
	Format string
	N      int
	Out    string
}

var saveJob = dataset.Job("formats.test.s3save", func(b *dataset.Builder, a args) error {
	rows := dataset.Map(dataset.Range(b, 0, int64(a.N), 3), makeRow)
	switch a.Format {
	case "csv":
		return csvfile.Save(rows, a.Out, csvfile.Options{Header: true}, dataset.Compress("gzip"))
	case "json":
		return jsonlines.Save(rows, a.Out)
	}
	return parquetfile.Save(rows, a.Out, parquetfile.SaveOptions{Compression: "zstd", RowGroupRows: 1000})
})

var readJob = dataset.JobResult("formats.test.s3read", func(b *dataset.Builder, a args) ([]row, error) {
	var ds dataset.Dataset[row]
	switch a.Format {
	case "csv":
		ds = csvfile.Read[row](b, csvfile.Options{Header: true}, a.Out)
	case "json":
		ds = jsonlines.Read[row](b, jsonlines.Options{}, a.Out)
	default:
		ds = parquetfile.Read[row](b, parquetfile.Options{}, a.Out)
	}
	rows, err := dataset.Collect(ds)
	slices.SortFunc(rows, func(x, y row) int { return int(x.ID - y.ID) })
	return rows, err
})

func s3Context(t *testing.T, srv *s3server.Server) *framework.Context {
	t.Helper()
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	t.Cleanup(s3fs.CloseIdleConnections)
	cfg := framework.NewConfig()
	conf := append([]string{"flint.master=local[2]", "flint.files.maxPartitionBytes=8192", "flint.files.openCostInBytes=0"}, srv.Conf()...)
	for _, kv := range conf {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fc.Stop(context.Background()) })
	return fc
}

// Each format writes to the real S3 server (versitygw) through the commit protocol and
// reads its output back, split (CSV and JSON by byte ranges, Parquet by row groups), every
// row once; no multipart upload is left open.
func TestEveryFormatOnS3(t *testing.T) {
	srv := s3server.Start(t, []string{"out"})
	fc := s3Context(t, srv)
	fs := testFS(t, srv)
	var want []row
	for i := range int64(5000) {
		want = append(want, makeRow(i))
	}
	for _, f := range []string{"csv", "json", "parquet"} {
		out := "s3://out/" + f
		if _, err := saveJob.Run(t.Context(), fc, args{Format: f, N: 5000, Out: out}); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		got, err := readJob.Run(t.Context(), fc, args{Format: f, Out: out})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("%s: read back %d rows, not the 5000 written", f, len(got))
		}
		if ups, _ := fs.Uploads(context.Background(), out); len(ups) != 0 {
			t.Fatalf("%s: uploads left open: %v", f, ups)
		}
	}
}

var failFastJob = dataset.JobResult("formats.test.s3failfast", func(b *dataset.Builder, path string) (int64, error) {
	return dataset.Count(csvfile.Read[row](b, csvfile.Options{Header: true, Mode: formats.FailFast}, path))
})

// A malformed row far into an S3 object (in a split that starts inside it) fails the job
// naming the object and the row's line in it.
func TestMalformedRowOnS3NamesObjectAndLine(t *testing.T) {
	srv := s3server.Start(t, []string{"data"})
	fc := s3Context(t, srv)
	var b strings.Builder
	b.WriteString("id,name,score\n")
	for i := range 3000 {
		if i == 2500 {
			b.WriteString("2500,bad,not-a-score\n")
			continue
		}
		fmt.Fprintf(&b, "%d,n%d,%d.5\n", i, i, i)
	}
	fs := testFS(t, srv)
	w, err := fs.Create(context.Background(), "s3://data/in.csv")
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte(b.String()))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = failFastJob.Run(t.Context(), fc, "s3://data/in.csv")
	want := `s3://data/in.csv:2502: malformed record: column score: "not-a-score" is not a float64`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

func testFS(t *testing.T, srv *s3server.Server) *s3fs.FS {
	t.Helper()
	fs, err := s3fs.New(context.Background(), s3fs.Options{Endpoint: srv.Endpoint, Region: s3server.Region, PathStyle: true,
		AccessKey: s3server.AccessKey, SecretKey: s3server.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(fs.CloseIdleConnections)
	return fs
}
