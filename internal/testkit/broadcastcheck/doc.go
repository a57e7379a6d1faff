// Package broadcastcheck runs a dataset job that reads one large
// broadcast variable from many tasks, on a given context — local, coarse,
// fine or embedded — and checks that every task read the exact value and
// that each executor process holds one copy of it (fetched and decoded
// once, shared by its tasks).
package broadcastcheck
