package recordcodec_test

import (
	"bytes"
	"encoding/gob"
	"encoding/hex"
	"fmt"
	"math/big"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/flint-mesos/flint/framework/recordcodec"
)

// visit is a struct key as a ported Spark job has them (a case class).
type visit struct {
	User  string
	Day   int32
	Pages []string
	Seen  map[string]int
	When  time.Time
	Score *big.Int
	Ref   *visit
	note  string     // unexported: not sent, as gob
	Done  chan bool  // chan: not sent, as gob
	Hook  func() int // func: not sent, as gob
}

type unrelated struct{ A, B, C int }

type withInterface struct{ V any }

func sampleVisit() visit {
	return visit{
		User: "ana", Day: 12, Pages: []string{"/", "/cart"},
		Seen:  map[string]int{"a": 1, "b": 2, "c": 3, "d": 4, "e": 5, "f": 6, "g": 7, "h": 8, "i": 9},
		When:  time.Date(2026, 12, 2, 5, 0, 0, 0, time.UTC),
		Score: big.NewInt(-12345678901234),
		Ref:   &visit{User: "bo", Day: -1},
	}
}

// TestStructKeysEncodeAlikeInEveryProcess runs two processes that meet
// other gob types in different orders before encoding the same key: the
// two encodings must be equal, or the shuffle hashes one key to two
// partitions. Gob's encodings differ (its type ids depend on the order).
func TestStructKeysEncodeAlikeInEveryProcess(t *testing.T) {
	primed := childEncoding(t, "primed")
	fresh := childEncoding(t, "fresh")
	if primed["gob"] == fresh["gob"] {
		t.Fatalf("gob encoded alike in both processes (%s); the test no longer shows the hazard it guards", primed["gob"])
	}
	if primed["for"] != fresh["for"] {
		t.Fatalf("For[visit] encodes one key two ways in two processes:\n primed %s\n fresh  %s", primed["for"], fresh["for"])
	}
}

// TestMain runs the package's tests, or, in a child process started by
// TestStructKeysEncodeAlikeInEveryProcess, prints that process's encodings.
func TestMain(m *testing.M) {
	if mode := os.Getenv("RECORDCODEC_CHILD"); mode != "" {
		os.Exit(encodeVisitChild(mode))
	}
	os.Exit(m.Run())
}

// encodeVisitChild prints gob's and For's encodings of one visit, after
// gob-encoding another type first when mode is "primed".
func encodeVisitChild(mode string) int {
	if mode == "primed" {
		if err := gob.NewEncoder(new(bytes.Buffer)).Encode(unrelated{1, 2, 3}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	v := sampleVisit()
	g, err := recordcodec.Gob[visit]().Append(nil, v)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	f, err := recordcodec.For[visit]().Append(nil, v)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Printf("\ngob=%s\nfor=%s\n", hex.EncodeToString(g), hex.EncodeToString(f))
	return 0
}

func childEncoding(t *testing.T, mode string) map[string]string {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "RECORDCODEC_CHILD="+mode)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && (k == "gob" || k == "for") {
			got[k] = v
		}
	}
	if got["gob"] == "" || got["for"] == "" {
		t.Fatalf("child %s printed no encodings:\n%s", mode, out)
	}
	return got
}

func TestStructCodecRoundTripsNestedValues(t *testing.T) {
	c := recordcodec.For[visit]()
	if c.Name() != "struct" {
		t.Fatalf("For[visit] chose %q, want struct", c.Name())
	}
	v := sampleVisit()
	v.note, v.Done, v.Hook = "dropped", make(chan bool), func() int { return 1 }
	b, err := c.Append(nil, v)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want := sampleVisit()
	if got.User != want.User || got.Day != want.Day || strings.Join(got.Pages, ",") != strings.Join(want.Pages, ",") ||
		len(got.Seen) != len(want.Seen) || got.Seen["i"] != 9 || !got.When.Equal(want.When) ||
		got.Score.Cmp(want.Score) != 0 || got.Ref == nil || got.Ref.User != "bo" || got.Ref.Day != -1 || got.Ref.Ref != nil {
		t.Fatalf("round trip: got %+v, want %+v", got, want)
	}
	if got.note != "" || got.Done != nil || got.Hook != nil {
		t.Fatalf("unexported, chan and func fields travelled: %+v", got)
	}
}

func TestStructCodecEncodesEqualMapsAlike(t *testing.T) {
	c := recordcodec.For[map[string][]int]()
	first := map[string][]int{}
	for i := range 200 {
		first[strings.Repeat("k", i%17)+string(rune('a'+i%26))] = []int{i, -i}
	}
	want, err := c.Append(nil, first)
	if err != nil {
		t.Fatal(err)
	}
	for range 20 { // Go randomises map iteration: each pass walks another order
		again := map[string][]int{}
		for k, v := range first {
			again[k] = v
		}
		got, err := c.Append(nil, again)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatal("two equal maps encoded differently")
		}
	}
}

func TestTypesHoldingAnInterfaceKeepGob(t *testing.T) {
	if n := recordcodec.For[withInterface]().Name(); n != "gob" {
		t.Fatalf("For[withInterface] chose %q, want gob", n)
	}
	if n := recordcodec.For[struct{ x int }]().Name(); n != "gob" {
		t.Fatalf("a struct with no exported field chose %q, want gob (which refuses it)", n)
	}
}

func TestStructCodecRefusesCorruptInput(t *testing.T) {
	c := recordcodec.For[visit]()
	b, err := c.Append(nil, sampleVisit())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]byte{nil, b[:len(b)-1], append(bytes.Clone(b), 0), {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}} {
		if _, err := c.Decode(bad); err == nil || !strings.Contains(err.Error(), "recordcodec: corrupt record") {
			t.Fatalf("Decode(%x) = %v, want a corrupt-record error", bad, err)
		}
	}
}

// An empty map or slice decodes as an empty one, nil as nil: a zero value
// copied through the codec (Fold's, Aggregate's) must stay writable.
func TestStructCodecKeepsEmptyApartFromNil(t *testing.T) {
	m := recordcodec.For[map[string]int]()
	b, err := m.Append(nil, map[string]int{})
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Decode(b)
	if err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty map decoded as %#v, %v; want an empty non-nil map", got, err)
	}
	if b, _ = m.Append(nil, nil); len(b) != 1 {
		t.Fatalf("nil map encoded as %x", b)
	}
	if got, err = m.Decode(b); err != nil || got != nil {
		t.Fatalf("nil map decoded as %#v, %v", got, err)
	}
	s := recordcodec.For[[]int]()
	b, _ = s.Append(nil, []int{})
	if got, err := s.Decode(b); err != nil || got == nil || len(got) != 0 {
		t.Fatalf("empty slice decoded as %#v, %v", got, err)
	}
	b, _ = s.Append(nil, nil)
	if got, err := s.Decode(b); err != nil || got != nil {
		t.Fatalf("nil slice decoded as %#v, %v", got, err)
	}
}
