package flintpb

// MaxBatchBytes is the most either end of the coarse-grained stream packs
// into one batch message (LaunchTasks, StatusUpdates): batching is for many
// small messages, and a few MiB already amortise the per-message cost.
const MaxBatchBytes = 4 << 20

// BatchBytes is the batch size on a stream whose messages may be up to
// maxMessage bytes: MaxBatchBytes, or half the limit when that is lower, so
// that a batch never comes near the limit. A single launch or update larger
// than the batch size travels alone.
func BatchBytes(maxMessage int) int { return min(MaxBatchBytes, maxMessage/2) }
