// Package waitfor is how tests wait for observable state: a condition is
// re-checked on a ticker until it holds or a deadline passes, and the
// test fails naming what it waited for. Tests never sleep to
// synchronise; where no state or event can be observed, use
// testing/synctest or a signal instead.
package waitfor
