// Package plural writes counts with their noun in the right number, for
// messages users read: "1 core", "2 cores", "1 agent", "0.5 cpus".
package plural
