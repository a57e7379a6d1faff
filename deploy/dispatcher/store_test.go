package dispatcher

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDirStoreRoundTripAndTornWrites(t *testing.T) {
	dir := t.TempDir()
	s, err := NewDirStore(dir)
	if err != nil {
		t.Fatal(err)
	}
	a := Record{ID: "driver-20261202080000-000a", Seq: 2, State: Running, TaskID: "driver-20261202080000-000a-1", Submitted: t0,
		Spec: Spec{Resource: "sha256:" + sha, Secrets: map[string]string{"flint.authenticate.secret": "sealed:v1:abc"}}}
	b := Record{ID: "driver-20261202080000-000b", Seq: 1, State: Queued, Submitted: t0}
	for _, r := range []Record{a, b, a} {
		if err := s.Save(r); err != nil {
			t.Fatal(err)
		}
	}
	// What a crash during a write leaves: a temporary file, never read.
	if err := os.WriteFile(filepath.Join(dir, "drivers", ".x.json.tmp-1"), []byte("{torn"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveFrameworkID("fw-1"); err != nil {
		t.Fatal(err)
	}
	s2, _ := NewDirStore(dir)
	got, err := s2.LoadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].ID != b.ID || got[1].ID != a.ID || got[1].State != Running || !got[1].Submitted.Equal(t0) {
		t.Fatalf("loaded %+v", got)
	}
	if fid, _ := s2.FrameworkID(); fid != "fw-1" {
		t.Fatalf("framework id %q", fid)
	}
	if err := s.Save(Record{ID: "../x"}); err == nil {
		t.Fatal("saved a record with a path in its id")
	}
	if fi, _ := os.Stat(filepath.Join(dir, "drivers", a.ID+".json")); fi.Mode().Perm() != 0o600 {
		t.Fatalf("record mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestSealerKeepsSecretsOutOfRecords(t *testing.T) {
	key, err := LoadOrCreateKey(filepath.Join(t.TempDir(), "k", "secrets.key"))
	if err != nil {
		t.Fatal(err)
	}
	s, _ := NewSealer(key)
	req := CreateRequest{Action: "CreateSubmissionRequest", AppResource: "sha256:" + sha,
		FlintProperties: map[string]string{"flint.authenticate.secret": "the-very-secret-value-42"}}
	spec, err := req.Validate(s.Seal)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, _ := NewDirStore(dir)
	if err := st.Save(Record{ID: "driver-20261202080000-0001", Spec: spec}); err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, "drivers", "driver-20261202080000-0001.json"))
	if bytes.Contains(raw, []byte("the-very-secret-value-42")) || !bytes.Contains(raw, []byte(sealedPrefix)) {
		t.Fatalf("stored record:\n%s", raw)
	}
	if v, err := s.Open(spec.Secrets["flint.authenticate.secret"]); err != nil || v != "the-very-secret-value-42" {
		t.Fatalf("open: %q %v", v, err)
	}
	other, _ := NewSealer(bytes.Repeat([]byte{1}, 32))
	if _, err := other.Open(spec.Secrets["flint.authenticate.secret"]); err == nil {
		t.Fatal("another key opened the secret")
	}
}

func TestBinariesChecksum(t *testing.T) {
	b, err := NewBinaries(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	content := []byte("\x7fELF not really")
	sum := sha256.Sum256(content)
	good := hex.EncodeToString(sum[:])
	if _, err := b.Put(sha, "prog", bytes.NewReader(content), 1<<20); !errors.Is(err, ErrChecksum) {
		t.Fatalf("mismatch: %v", err)
	}
	if _, err := b.Path(sha); err == nil {
		t.Fatal("a binary that failed its check was kept")
	}
	p, err := b.Put(good, "prog", bytes.NewReader(content), 1<<20)
	if err != nil || filepath.Base(filepath.Dir(p)) != good {
		t.Fatalf("put: %s %v", p, err)
	}
	if got, err := b.Path(good); err != nil || got != p {
		t.Fatalf("path: %s %v", got, err)
	}
	if _, err := b.Put(good, "../x", bytes.NewReader(content), 1<<20); !errors.Is(err, ErrBadRequest) {
		t.Fatalf("bad name: %v", err)
	}
	if _, err := b.Put(good, "big", bytes.NewReader(content), 3); err == nil || !strings.Contains(err.Error(), "over 3 bytes") {
		t.Fatalf("over the limit: %v", err)
	}
}

func TestIsFlintProgram(t *testing.T) {
	exe, _ := os.Executable() // this test binary links Flint
	if ok, why := IsFlintProgram(exe); !ok {
		t.Fatalf("the test binary: %s", why)
	}
	f := filepath.Join(t.TempDir(), "script")
	_ = os.WriteFile(f, []byte("#!/bin/sh\necho hi\n"), 0o755)
	if ok, why := IsFlintProgram(f); ok || !strings.Contains(why, "script is not a Go executable") {
		t.Fatalf("a script: %v %s", ok, why)
	}
}
