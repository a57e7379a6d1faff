package sim

import (
	"fmt"

	"github.com/flint-mesos/flint/framework/driver"
	"github.com/flint-mesos/flint/framework/mapoutput"
)

// The memory the driver holds per task and per map output, bounded after
// every step (the invariant "memory held by the driver per task and per
// map output stays within a stated bound"). The bounds, in words (the
// package README states them too):
//
// Map-output tracker (its own accounting: Tracker.MapOutputBytes, which
// counts each map index's record and each registered output's encoded
// sizes, and Tracker.LocationBytes), for a shuffle of M maps and R
// reducers of which n outputs are registered:
//
//	MapOutputBytes ≤ 40·M + n·enc(R)
//	enc(R) = 1 + R                      for R < 2,000 (Spark's CompressedMapStatus: a byte per block)
//	enc(R) = 1 + ⌈R/8⌉ + 8 + 12·H       from 2,000 on (HighlyCompressedMapStatus: the empty
//	                                    blocks' bitmap, or their list when shorter, the
//	                                    average size, and an exact size for each of the H
//	                                    blocks of at least 100 MiB; the simulated blocks are
//	                                    at most 100 kB, so H = 0)
//
// (40 bytes: a record's sizes slice header, task id and location index on
// a 64-bit machine.) The location table keeps every location it was told
// of for the driver's life — it grows with the executors that ever wrote a
// map output, not with tasks:
//
//	LocationBytes ≤ Σ over the distinct (executor, host, address) of the
//	                map outputs that reached the driver of 68 + |executor| + 2·|host| + |address|
//
// (a Location of three strings, 48 bytes, its 4-byte host index and a
// 16-byte host string header; the host's bytes counted twice, once in the
// host table.)
//
// Driver core (driver.Retained), with L the attempts this driver launched
// whose end it has not been told of (the sim's own count), S the distinct
// task sets of those attempts and J the jobs submitted and not ended: the
// core's attempts, the task core's and the attempts holding cores are each
// ≤ L (an ended attempt is not kept); task sets ≤ J + S (each job's
// running stage attempt, and zombie attempts whose tasks still run); jobs
// ≤ J; stage statuses not ended ≤ 2·J (two stages a job), ended ones ≤
// 1,000 (the status tracker forgets the oldest beyond). The UI store
// (framework/uistore, bounded by flint.ui.retained*) is not in the
// simulated driver: the sim's event bus has no listener.

// recordBytes is a tracker record's size per map index (see above).
const recordBytes = 40

// encBound is the most bytes one map output's encoded sizes take for r
// reducers and h blocks of at least 100 MiB.
func encBound(r, h int) int {
	if r < 2000 {
		return 1 + r
	}
	return 1 + (r+7)/8 + 8 + 12*h
}

// locationBound is the most a location takes in the tracker's table.
func locationBound(l mapoutput.Location) int {
	return 68 + len(l.ExecutorID) + 2*len(l.Host) + len(l.Address)
}

// trackerBound checks a shuffle's tracker bytes against its bound: "" or
// the violation.
func trackerBound(shuffle, maps, reduces, registered, bytes int) string {
	if limit := recordBytes*maps + registered*encBound(reduces, 0); bytes > limit {
		return fmt.Sprintf("the map-output tracker holds %d bytes for shuffle %d (%d maps, %d registered, %d reducers), over its bound 40·M + n·enc(R) = %d",
			bytes, shuffle, maps, registered, reduces, limit)
	}
	return ""
}

// retainedBound checks what the driver core retains against the sim's
// own counts: live attempts, their distinct task sets, unended jobs.
func retainedBound(r driver.Retained, live, liveSets, jobs int) string {
	for _, c := range []struct {
		what     string
		got, max int
	}{
		{"attempts (driver core)", r.Attempts, live},
		{"attempts (task core)", r.TaskCoreAttempts, live},
		{"attempts holding cores", r.SlotUses, live},
		{"task sets", r.TaskSets, jobs + liveSets},
		{"jobs", r.Jobs, jobs},
		{"stage statuses not ended", r.Stages - r.EndedStages, 2 * jobs},
		{"ended stage statuses", r.EndedStages, 1000},
	} {
		if c.got > c.max {
			return fmt.Sprintf("the driver core keeps %d %s, over its bound %d (%d attempts live, of %d task sets; %d jobs not ended): %+v",
				c.got, c.what, c.max, live, liveSets, jobs, r)
		}
	}
	return ""
}

// liveAttempt notes attempt a launched (true) or ended (false) in the
// sim's counts the bounds use.
func (sd *simDriver) liveAttempt(a *attempt, launched bool) {
	if launched {
		sd.live++
		sd.liveSets[a.taskSet]++
		return
	}
	sd.live--
	if sd.liveSets[a.taskSet]--; sd.liveSets[a.taskSet] == 0 {
		delete(sd.liveSets, a.taskSet)
	}
}

// noteLocation adds a map output's location to the locations the driver
// was told of (the location table's bound).
func (sd *simDriver) noteLocation(l mapoutput.Location) {
	if _, ok := sd.locs[l]; !ok {
		sd.locs[l] = struct{}{}
		sd.locBytes += locationBound(l)
	}
}

// checkRetained asserts the driver core's bounds.
func (sd *simDriver) checkRetained() {
	jobs := 0
	for _, j := range sd.jobs {
		if !j.ended {
			jobs++
		}
	}
	sd.d.InspectRetained(func(r driver.Retained) {
		if v := retainedBound(r, sd.live, len(sd.liveSets), jobs); v != "" {
			sd.s.fail("%s", v)
		}
	})
}
