package formats_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/config"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

type killArgs struct {
	Out, Marker string
	N           int // records; each is a line of about 1 KiB
}

// killedLine is record x's line: its number, then padding to about 1 KiB, so a partition of
// a few thousand records fills more than one 5 MiB part of a multipart upload.
func killedLine(x int64) string { return fmt.Sprintf("%d %s", x, strings.Repeat("k", 1000)) }

// killedWriteJob saves N lines in 4 partitions. The first attempt of partition 1, run by an
// executor, kills its executor's process after writing 6 MiB of its part (one part of the
// multipart upload already uploaded, the upload open): the first to create Marker dies.
var killedWriteJob = dataset.Job("formats.test.s3killedwrite", func(b *dataset.Builder, a killArgs) error {
	lines := dataset.MapPartitionsWithContext(dataset.Range(b, 0, int64(a.N), 4),
		func(tc dataset.TaskContext, records iter.Seq[int64], yield func(string)) error {
			written := 0
			for x := range records {
				line := killedLine(x)
				yield(line)
				if written += len(line) + 1; tc.Partition() == 1 && written > 6<<20 && written-len(line)-1 <= 6<<20 {
					if f, err := os.OpenFile(a.Marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
						f.Close()
						os.Exit(3) // the executor dies mid-write
					}
				}
			}
			return nil
		})
	return dataset.SaveAsTextFile(lines, a.Out)
})

// ownContext is a Context of mode m of its own (a case that kills executors must not share
// the suite's), reaching the shared S3 server with 5 MiB upload parts.
func ownContext(t *testing.T, m threemode.Mode) (*framework.Context, *syncWriter) {
	t.Helper()
	conf := append(threemode.Conf(m), shared.Conf()...)
	conf = append(conf, "flint.s3.multipart.size=5m", "flint.embedded.workDir="+t.TempDir())
	cfg, err := config.Load(config.LoadOptions{Conf: conf})
	if err != nil {
		t.Fatal(err)
	}
	logs := &syncWriter{w: &strings.Builder{}}
	log := logrus.New()
	log.SetOutput(logs)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := fc.Stop(ctx); err != nil {
			t.Errorf("stop: %v", err)
		}
	})
	return fc, logs
}

// An executor killed while it writes a part (its multipart upload open, one part uploaded):
// the task is retried, and the output holds exactly one copy of each partition — the four
// parts and _SUCCESS, every line once — with no multipart upload left open. Coarse and fine.
func TestExecutorKilledMidWriteOnS3(t *testing.T) {
	fs := testFS(t, shared)
	const n = 4 * 7000 // 7000 lines of ~1 KiB a partition: 7 MiB, two parts
	for _, m := range []threemode.Mode{threemode.Coarse, threemode.Fine} {
		t.Run(string(m), func(t *testing.T) {
			fc, logs := ownContext(t, m)
			out := "s3://" + sharedBucket + "/killed-" + string(m)
			marker := filepath.Join(t.TempDir(), "killed")
			if _, err := killedWriteJob.Run(t.Context(), fc, killArgs{Out: out, Marker: marker, N: n}); err != nil {
				t.Fatalf("%v\n%s", err, logs.String())
			}
			if _, err := os.Stat(marker); err != nil {
				t.Fatalf("no executor was killed mid-write: %v", err)
			}
			files, err := fs.List(context.Background(), out)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, f := range files {
				names = append(names, strings.TrimPrefix(f.Path, out+"/"))
			}
			slices.Sort(names)
			if want := []string{"_SUCCESS", "part-00000", "part-00001", "part-00002", "part-00003"}; !slices.Equal(names, want) {
				t.Fatalf("output holds %v, want %v", names, want)
			}
			seen := make([]int, n)
			for _, f := range files {
				r, err := fs.Open(context.Background(), f, 0, -1)
				if err != nil {
					t.Fatal(err)
				}
				b, err := io.ReadAll(r)
				r.Close()
				if err != nil {
					t.Fatal(err)
				}
				for line := range strings.Lines(string(b)) {
					num, _, _ := strings.Cut(line, " ")
					x, err := strconv.Atoi(num)
					if err != nil || x < 0 || x >= n || line != killedLine(int64(x))+"\n" {
						t.Fatalf("%s: bad line %.40q", f.Path, line)
					}
					seen[x]++
				}
			}
			for x, c := range seen {
				if c != 1 {
					t.Fatalf("line %d is in the output %d times, want once", x, c)
				}
			}
			if ups, err := fs.Uploads(context.Background(), out); err != nil || len(ups) != 0 {
				t.Fatalf("uploads left open: %v (%v)", ups, err)
			}
		})
	}
}

// syncWriter serialises a logger's writes into w.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return fmt.Sprint(s.w)
}

// A gzip object corrupted midway (flipped bytes in its deflate stream) or cut short fails the
// job with one error naming the object and the codec, in every mode: no row of it is counted
// as read.
func TestCorruptGzipOnS3(t *testing.T) {
	fs := testFS(t, shared)
	var text bytes.Buffer
	text.WriteString("id,name,score\n")
	for i := range 20000 {
		fmt.Fprintf(&text, "%d,n%d,%d.5\n", i, i%97, i)
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(text.Bytes())
	zw.Close()
	good := gz.Bytes()
	corrupt := bytes.Clone(good)
	for i := len(corrupt) / 2; i < len(corrupt)/2+64; i++ {
		corrupt[i] ^= 0x5a
	}
	objects := map[string][]byte{"corrupt.csv.gz": corrupt, "cut.csv.gz": good[:len(good)*2/3]}
	for name, b := range objects {
		w, err := fs.Create(context.Background(), "s3://"+sharedBucket+"/gz/"+name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	threemode.Run(t, func(t *testing.T, fc *framework.Context) {
		for name := range objects {
			path := "s3://" + sharedBucket + "/gz/" + name
			_, err := failFastJob.Run(t.Context(), fc, path)
			if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "gzip") {
				t.Fatalf("%s: err = %v, want one error naming the object and gzip", name, err)
			}
		}
	})
}
