package plural

import "strconv"

// N is n and noun, with an "s" unless n is 1 ("1 task", "3 tasks").
func N(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// F is N for a fractional amount ("1 cpu", "1.5 cpus", "0.1 cpus").
func F(x float64, noun string) string {
	s := strconv.FormatFloat(x, 'g', -1, 64)
	if x == 1 {
		return s + " " + noun
	}
	return s + " " + noun + "s"
}
