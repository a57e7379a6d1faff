package dispatcher

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// queuedSpec is a typical queued submission: an uploaded program, a few
// arguments and properties, one sealed secret.
func queuedSpec(s *Sealer) Spec {
	sealed, _ := s.Seal("a-secret-of-24-characters")
	return Spec{Resource: "sha256:" + sha, SHA256: sha, Name: "flint", Example: "wordcount",
		Args:       []string{"--top", "10", "/data/input.txt"},
		Properties: map[string]string{"flint.executor.memory": "2g", "flint.cores.max": "8", "flint.eventLog.enabled": "true"},
		Secrets:    map[string]string{"flint.authenticate.secret": sealed}, Cores: 1, MemMB: 1024}
}

// BenchmarkRecover1000Queued measures what 1,000 queued submissions cost:
// bytes per stored record, and the time to recover them after a restart
// (LoadAll from the directory store plus Restore into a Core).
//
//	go test -run '^$' -bench Recover1000Queued ./deploy/dispatcher/
func BenchmarkRecover1000Queued(b *testing.B) {
	dir := b.TempDir()
	st, _ := NewDirStore(dir)
	sealer, _ := NewSealer(make([]byte, 32))
	core := NewCore(CoreConfig{})
	now := time.Now()
	for i := range 1000 {
		r, _ := core.Submit(fmt.Sprintf("driver-20261202080000-%04x", i), queuedSpec(sealer), now)
		if err := st.Save(*r); err != nil {
			b.Fatal(err)
		}
	}
	var total int64
	ents, _ := os.ReadDir(filepath.Join(dir, "drivers"))
	for _, e := range ents {
		fi, _ := e.Info()
		total += fi.Size()
	}
	for b.Loop() {
		recs, err := st.LoadAll()
		if err != nil || len(recs) != 1000 {
			b.Fatalf("%d records, %v", len(recs), err)
		}
		c := NewCore(CoreConfig{MaxDrivers: 4})
		c.Restore(recs)
		if n := len(c.Launchable(now)); n != 4 {
			b.Fatalf("launchable %d", n)
		}
	}
	b.ReportMetric(float64(total)/1000, "bytes/record")
}

// BenchmarkSubmitAndStore is one submission's cost in the dispatcher:
// validation (properties checked against Flint's keys, a secret sealed), the
// core and the atomic, fsynced store write.
func BenchmarkSubmitAndStore(b *testing.B) {
	st, _ := NewDirStore(b.TempDir())
	sealer, _ := NewSealer(make([]byte, 32))
	core := NewCore(CoreConfig{})
	req := CreateRequest{Action: "CreateSubmissionRequest", AppResource: "sha256:" + sha, Example: "wordcount",
		AppArgs:         []string{"--top", "10", "/data/input.txt"},
		FlintProperties: map[string]string{"flint.executor.memory": "2g", "flint.authenticate.secret": "a-secret-of-24-characters"}}
	i := 0
	for b.Loop() {
		spec, err := req.Validate(sealer.Seal)
		if err != nil {
			b.Fatal(err)
		}
		r, _ := core.Submit(fmt.Sprintf("driver-%014d-%04x", i/0x10000, i%0x10000), spec, time.Now())
		i++
		if err := st.Save(*r); err != nil {
			b.Fatal(err)
		}
	}
}
