// Package examples lists Flint's bundled sample jobs by name, for
// `flint submit --example NAME`. Each job lives in its own package (pi,
// wordcount) whose task functions are registered when it is imported.
package examples
