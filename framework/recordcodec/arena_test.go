package recordcodec_test

import (
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/recordcodec"
)

// arenaRoundTrip encodes want with For[T], decodes it through Decoder
// with an arena, overwrites the encoding and checks the decoded value is
// still want: arena strings never alias their input.
func arenaRoundTrip[T any](t *testing.T, a *recordcodec.Arena, want T) T {
	t.Helper()
	c := recordcodec.For[T]()
	b, err := c.Append(nil, want)
	if err != nil {
		t.Fatalf("Append(%v): %v", want, err)
	}
	got, err := recordcodec.Decoder(c, a)(b)
	if err != nil {
		t.Fatalf("Decoder(%s)(%q): %v", c.Name(), b, err)
	}
	for i := range b {
		b[i] = 'X'
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("Decoder(%s) = %#v, want %#v", c.Name(), got, want)
	}
	return got
}

func TestArenaDecoderRoundTrips(t *testing.T) {
	var a recordcodec.Arena
	arenaRoundTrip(t, &a, "hello")
	arenaRoundTrip(t, &a, "")
	arenaRoundTrip(t, &a, word("named"))
	arenaRoundTrip(t, &a, strings.Repeat("long", recordcodec.ArenaChunk)) // its own allocation
	arenaRoundTrip(t, &a, recordcodec.KV[string, string]{Key: "k", Value: "v"})
	arenaRoundTrip(t, &a, recordcodec.KV[string, int64]{Key: "count", Value: -7})
	arenaRoundTrip(t, &a, recordcodec.KV[int64, word]{Key: 3, Value: "w"})
	arenaRoundTrip(t, &a, recordcodec.KV[int64, int64]{Key: 1, Value: 2}) // Decode itself
	arenaRoundTrip(t, &a, []byte("bytes are copied by Decode"))
	arenaRoundTrip(t, &a, point{X: 1, Tags: []string{"gob"}})
}

// Strings carved from many chunks stay intact across collections while
// referenced.
func TestArenaStringsSurviveCollections(t *testing.T) {
	var a recordcodec.Arena
	var kept []string
	for i := range 10 * recordcodec.ArenaChunk {
		s := strings.Repeat(string(rune('a'+i%26)), 1+i%40)
		kept = append(kept, arenaRoundTrip(t, &a, s))
		if i%5000 == 0 {
			runtime.GC()
		}
	}
	runtime.GC()
	for i, s := range kept {
		if want := strings.Repeat(string(rune('a'+i%26)), 1+i%40); s != want {
			t.Fatalf("string %d = %q after collections, want %q", i, s, want)
		}
	}
}

func TestArenaDecoderReportsCorruptPairs(t *testing.T) {
	var a recordcodec.Arena
	dec := recordcodec.Decoder(recordcodec.For[recordcodec.KV[string, string]](), &a)
	if _, err := dec([]byte{9, 'a'}); err == nil || !strings.Contains(err.Error(), "pair's key length") {
		t.Fatalf("decoding a pair whose key length overruns: %v, want a corrupt-record error", err)
	}
}

func TestArenaAllocatesPerChunkNotPerString(t *testing.T) {
	var a recordcodec.Arena
	dec := recordcodec.Decoder(recordcodec.For[recordcodec.KV[string, string]](), &a)
	enc, err := recordcodec.For[recordcodec.KV[string, string]]().Append(nil, recordcodec.KV[string, string]{Key: "0123456789", Value: strings.Repeat("v", 90)})
	if err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1000, func() {
		if _, err := dec(enc); err != nil {
			t.Fatal(err)
		}
	})
	// 100 bytes a record: one chunk per ~20 records
	if allocs > 0.1 {
		t.Fatalf("%.2f allocations per 100-byte pair, want at most 0.1 (one per %d-byte chunk)", allocs, recordcodec.ArenaChunk)
	}
}
