package wordcount_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	"go.uber.org/goleak"

	"github.com/flint-mesos/flint/examples/wordcount"
	"github.com/flint-mesos/flint/framework"
	_ "github.com/flint-mesos/flint/framework/local"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestSplitKeepsWholeLinesWithinSize(t *testing.T) {
	text := "alpha beta\ngamma\n" + strings.Repeat("x", 40) + "\ndelta epsilon\nzeta\n"
	chunks := wordcount.Split("f", []byte(text), 16)
	var joined strings.Builder
	for _, c := range chunks {
		if len(c.Text) > 16 && strings.Count(c.Text, "\n") > 1 {
			t.Fatalf("chunk %q exceeds 16 bytes with more than one line", c.Text)
		}
		if !strings.HasSuffix(c.Text, "\n") {
			t.Fatalf("chunk %q does not end at a line boundary", c.Text)
		}
		joined.WriteString(c.Text)
	}
	if joined.String() != text {
		t.Fatalf("chunks joined = %q, want the original text", joined.String())
	}
	if len(chunks) != 5 {
		t.Fatalf("got %d chunks, want 5: %q", len(chunks), chunks)
	}
}

func TestRunMergesCountsAcrossTasks(t *testing.T) {
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[3]"); err != nil {
		t.Fatal(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(cfg, framework.WithLogger(log))
	if err != nil {
		t.Fatal(err)
	}
	defer fc.Stop()
	dir := t.TempDir()
	a := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(a, []byte("The cat sat.\nthe CAT ran\nA dog's day\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(a)
	chunks := append(wordcount.Split(a, b, 12), wordcount.Split("b", []byte("cat\ncat\n"), 4)...)
	if len(chunks) < 4 {
		t.Fatalf("want several tasks, got %d chunks", len(chunks))
	}
	got, err := wordcount.Run(context.Background(), fc, chunks)
	if err != nil {
		t.Fatal(err)
	}
	want := []wordcount.WordCount{{"cat", 4}, {"the", 2}, {"a", 1}, {"day", 1}, {"dog's", 1}, {"ran", 1}, {"sat", 1}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("got %v, want %v", got, want)
		}
	}
}
