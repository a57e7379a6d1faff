package mapoutput

import "fmt"

// Location is where a map output is served from: the executor that wrote
// it, its host and the executor's shuffle-serving address.
type Location struct {
	ExecutorID string
	Host       string
	Address    string
}

func (l Location) String() string {
	return fmt.Sprintf("%s@%s(%s)", l.ExecutorID, l.Host, l.Address)
}

// Status is what a map task attempt reports when its output is committed
// (Spark's MapStatus): the output's identity, the attempt that wrote it,
// where it lives and the size in bytes of every reduce partition's block,
// exactly as the writer measured them (the tracker compresses them).
type Status struct {
	ShuffleID int
	MapIndex  int
	TaskID    uint64 // the driver's id of the attempt that wrote the output
	Location  Location
	Sizes     []uint64 // len == the shuffle's number of reduce partitions
}

// FetchFailure is what a reduce task reports when it cannot read the block
// of map output (ShuffleID, MapIndex) for reduce partition ReduceIndex from
// the named location. MapIndex is -1 when the failure is not tied to one
// map output (the reducer's snapshot had no location for some output).
// It implements error so executor code can return it and find it again
// with errors.As.
type FetchFailure struct {
	ShuffleID   int
	MapIndex    int
	ReduceIndex int
	ExecutorID  string
	Host        string
	Address     string
	Message     string
}

// Location returns the location the failed fetch was made from.
func (f *FetchFailure) Location() Location {
	return Location{ExecutorID: f.ExecutorID, Host: f.Host, Address: f.Address}
}

func (f *FetchFailure) Error() string {
	return fmt.Sprintf("mapoutput: fetch of shuffle %d map %d reduce %d from executor %s at %s (%s) failed: %s",
		f.ShuffleID, f.MapIndex, f.ReduceIndex, f.ExecutorID, f.Address, f.Host, f.Message)
}
