package recordcodec_test

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework/recordcodec"
)

var sink []byte

// benchPairs measures encoding and decoding of (word, count) pairs, the
// records of a word count.
func benchPairs(b *testing.B, c recordcodec.Codec[recordcodec.KV[string, int64]]) {
	recs := make([]recordcodec.KV[string, int64], 1024)
	for i := range recs {
		recs[i] = recordcodec.KV[string, int64]{Key: "word" + strconv.Itoa(i), Value: int64(i)}
	}
	b.Run("encode", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for i := 0; b.Loop(); i++ {
			buf, _ = c.Append(buf[:0], recs[i&1023])
		}
		sink = buf
	})
	enc := make([][]byte, len(recs))
	for i, r := range recs {
		enc[i], _ = c.Append(nil, r)
	}
	b.Run("decode", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := c.Decode(enc[i&1023]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkPairTyped(b *testing.B) {
	benchPairs(b, recordcodec.For[recordcodec.KV[string, int64]]())
}
func BenchmarkPairGob(b *testing.B) { benchPairs(b, recordcodec.Gob[recordcodec.KV[string, int64]]()) }

// BenchmarkDecodeRecord100 decodes 100-byte records (a 10-byte key, a
// 90-byte value: the shuffle benchmarks' records) as strings, one
// allocation per string (Decode) or carved from an Arena (Decoder).
func BenchmarkDecodeRecord100(b *testing.B) {
	type rec = recordcodec.KV[string, string]
	c := recordcodec.For[rec]()
	var enc [][]byte
	for i := range 1024 {
		e, err := c.Append(nil, rec{Key: fmt.Sprintf("%010d", i), Value: strings.Repeat("v", 90)})
		if err != nil {
			b.Fatal(err)
		}
		enc = append(enc, e)
	}
	var a recordcodec.Arena
	for _, bc := range []struct {
		name string
		dec  func([]byte) (rec, error)
	}{{"Decode", c.Decode}, {"Arena", recordcodec.Decoder(c, &a)}} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			sink := make([]rec, 1024)
			for i := 0; b.Loop(); i++ {
				r, err := bc.dec(enc[i&1023])
				if err != nil {
					b.Fatal(err)
				}
				sink[i&1023] = r
			}
		})
	}
}

// userKey is a struct key as a ported job has them.
type userKey struct {
	User string
	Day  int32
}

// benchStructs measures a struct key's codec: the type walk For picks
// ("struct") beside gob, the path it replaced.
func benchStructs(b *testing.B, c recordcodec.Codec[userKey]) {
	recs := make([]userKey, 1024)
	for i := range recs {
		recs[i] = userKey{User: "user" + strconv.Itoa(i), Day: int32(i % 366)}
	}
	b.Run("encode", func(b *testing.B) {
		buf := make([]byte, 0, 64)
		for i := 0; b.Loop(); i++ {
			buf, _ = c.Append(buf[:0], recs[i&1023])
		}
		sink = buf
	})
	enc := make([][]byte, len(recs))
	for i, r := range recs {
		enc[i], _ = c.Append(nil, r)
	}
	b.Run("decode", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			if _, err := c.Decode(enc[i&1023]); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkStructKeyWalk(b *testing.B) { benchStructs(b, recordcodec.For[userKey]()) }
func BenchmarkStructKeyGob(b *testing.B)  { benchStructs(b, recordcodec.Gob[userKey]()) }
