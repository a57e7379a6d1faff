// Package varenc is the compact binary layout Flint's hand-written wire
// formats share (the map-output snapshot, the stage task and its output):
// fields appended as varints and length-prefixed bytes by an Encoder, read
// back by a Decoder whose first error sticks, so a decode function reads
// every field and checks once. Every error wraps the caller's sentinel
// (mapoutput.ErrBadSnapshot, stagetask.ErrBadEncoding), and no length read
// from the input is trusted beyond the bytes that are left.
package varenc
