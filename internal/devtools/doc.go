// Package devtools groups developer tools that are not tests: the deterministic simulation
// (sim), benchmark baselines and inputs (benchbase, grpcecho, benchdata) and the CPU burner
// that `make stress` runs beside the suites (cpuburn).
package devtools
