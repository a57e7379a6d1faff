package dataset_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
)

// runExampleIn runs j with dir as its argument on a local[2] Context.
func runExampleIn[R any](j *dataset.JobDef[string, R], dir string) R {
	cfg := framework.NewConfig()
	if err := cfg.Set("flint.master", "local[2]"); err != nil {
		panic(err)
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, framework.WithLogger(log))
	if err != nil {
		panic(err)
	}
	defer fc.Stop(context.Background())
	r, err := j.Run(context.Background(), fc, dir)
	if err != nil {
		panic(err)
	}
	return r
}

// exampleDir is a temporary directory holding the named files.
func exampleDir(files map[string]string) string {
	dir, err := os.MkdirTemp("", "flint-example-")
	if err != nil {
		panic(err)
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			panic(err)
		}
	}
	return dir
}

var exampleWholeTextFiles = dataset.JobResult("example.wholetextfiles", func(b *dataset.Builder, dir string) ([]string, error) {
	files := dataset.WholeTextFiles(b, dir, 2)
	kvs, err := dataset.Collect(files)
	var out []string
	for _, kv := range kvs {
		out = append(out, fmt.Sprintf("%s: %q", filepath.Base(kv.Key), kv.Value))
	}
	slices.Sort(out)
	return append(out, fmt.Sprint(files.Partitions(), " partitions")), err
})

func ExampleWholeTextFiles() {
	dir := exampleDir(map[string]string{"a.txt": "one\ntwo\n", "b.txt": "three", "c.txt": ""})
	defer os.RemoveAll(dir)
	for _, l := range runExampleIn(exampleWholeTextFiles, dir) {
		fmt.Println(l)
	}
	// Output:
	// a.txt: "one\ntwo\n"
	// b.txt: "three"
	// c.txt: ""
	// 2 partitions
}

var exampleBinaryFiles = dataset.JobResult("example.binaryfiles", func(b *dataset.Builder, dir string) ([]string, error) {
	kvs, err := dataset.Collect(dataset.BinaryFiles(b, dir, 0))
	var out []string
	for _, kv := range kvs {
		out = append(out, fmt.Sprintf("%s: %v", filepath.Base(kv.Key), kv.Value))
	}
	slices.Sort(out)
	return out, err
})

func ExampleBinaryFiles() {
	dir := exampleDir(map[string]string{"record.bin": string([]byte{1, 2, 3, 4, 5, 6}), "zero.bin": "\x00\xff"})
	defer os.RemoveAll(dir)
	for _, l := range runExampleIn(exampleBinaryFiles, dir) {
		fmt.Println(l)
	}
	// Output:
	// record.bin: [1 2 3 4 5 6]
	// zero.bin: [0 255]
}
