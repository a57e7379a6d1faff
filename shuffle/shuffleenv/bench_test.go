package shuffleenv_test

import (
	"testing"

	"github.com/flint-mesos/flint/shuffle/shuffleenv"
)

// BenchmarkLocation is what a map task's status costs in its location:
// with the agent's shuffle service, the stat of the service's InfoFile
// that notices a restart (registration.current), beside an executor
// serving its own outputs (a field read) and, for scale, the write and
// commit of a map output of one record in 4 partitions on the same
// executor (the least a map task does).
//
//	go test -run '^$' -bench Location -benchtime 200000x ./shuffle/shuffleenv/
func BenchmarkLocation(b *testing.B) {
	dir := b.TempDir()
	svc := startService(b, dir)
	defer svc.Close()
	withSvc, err := startWithService(b, "exec-b", "127.0.0.1", dir)
	if err != nil {
		b.Fatal(err)
	}
	defer withSvc.Close()
	own := start(b, "exec-o", "127.0.0.1", b.TempDir(), true)
	defer own.Close()
	b.Run("own-server", func(b *testing.B) {
		for b.Loop() {
			if own.Location().Address == "" {
				b.Fatal("no address")
			}
		}
	})
	b.Run("service", func(b *testing.B) {
		for b.Loop() {
			if withSvc.Location().Address == "" {
				b.Fatal("no address")
			}
		}
	})
	b.Run("tiny-map-output", func(b *testing.B) {
		i := 0
		for b.Loop() {
			w, err := shuffleenv.CombiningWriter(withSvc, 1, i, 0, 4, strs, ints, sum)
			if err != nil {
				b.Fatal(err)
			}
			if err := w.Add(0, "k", 1); err != nil {
				b.Fatal(err)
			}
			if _, err := w.Commit(); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}
