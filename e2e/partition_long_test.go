package e2e

import (
	"testing"
	"time"
)

// TestMasterPartitionedFromDriverLong is TestMasterPartitionedFromDriver
// with a longer partition: the driver is cut off until its first attempt
// to subscribe again, made while partitioned, has failed (about 15s:
// flint's CallTimeout), which is still well within the failover timeout
// (60s). The driver must re-subscribe as the same framework once the
// partition heals and the job finish correctly, with no executor left.
//
// This caught a real bug: the SUBSCRIBE made during the partition went out
// on a stalled pooled keep-alive connection; it timed out in the driver but
// TCP still delivered it after the partition healed, after the driver's
// next SUBSCRIBE had succeeded, so the master failed the framework over to
// that stale request and the driver gave up on "Framework failed over".
// mesosconn now closes idle connections after a lost session and dials
// with SO_LINGER 0.
func TestMasterPartitionedFromDriverLong(t *testing.T) {
	partitionDriver(t, func(d *driver) {
		// The first line: the stream went silent; the second: the
		// SUBSCRIBE made while partitioned failed.
		d.waitLog(40*time.Second, "the partitioned driver to drop its subscription and fail to subscribe again", subscriptionLost, 2)
	})
}
