package dataset

import (
	"testing"
)

type digestInner struct {
	M map[string]int
	p *int
}

// Equal values digest alike whatever their addresses and map order;
// different values differ.
func TestDigestOfIsCanonical(t *testing.T) {
	one, alsoOne, two := 1, 1, 2
	mk := func(p *int, keys ...string) []digestInner {
		m := map[string]int{}
		for i, k := range keys {
			m[k] = i
		}
		return []digestInner{{M: m, p: p}}
	}
	a := digestOf(mk(&one, "a", "b", "c", "d", "e"))
	for range 20 { // map iteration order varies between ranges
		if b := digestOf(mk(&alsoOne, "a", "b", "c", "d", "e")); b != a {
			t.Fatalf("equal values digest %s and %s", a, b)
		}
	}
	for _, other := range [][]digestInner{mk(&two, "a", "b", "c", "d", "e"), mk(&one, "a", "b", "c", "e", "d"), mk(nil, "a", "b", "c", "d", "e")} {
		if digestOf(other) == a {
			t.Errorf("%+v digests like the original", other)
		}
	}
	if digestOf([]int{1, 2}, 3) == digestOf([]int{1}, 2, 3) {
		t.Error("the slice's length is not part of the digest")
	}
	type cyc struct{ Next *cyc }
	c := &cyc{}
	c.Next = c
	_ = digestOf(c) // a cycle ends at the depth bound
}
