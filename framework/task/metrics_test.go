package task

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestMetricsFromContextSumsConcurrentReports(t *testing.T) {
	m := &Metrics{}
	ctx := WithMetrics(context.Background(), m)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			MetricsFrom(ctx).AddShuffle(ShuffleMetrics{RecordsWritten: 2, BytesWritten: 10, Spills: 1, SpillBytes: 5,
				WriteTime: time.Millisecond, LocalBlocks: 1, RemoteBlocks: 3, LocalBytes: 7, RemoteBytes: 11, FetchWait: time.Second})
		}()
	}
	wg.Wait()
	got := m.Shuffle()
	want := ShuffleMetrics{RecordsWritten: 16, BytesWritten: 80, Spills: 8, SpillBytes: 40, WriteTime: 8 * time.Millisecond,
		LocalBlocks: 8, RemoteBlocks: 24, LocalBytes: 56, RemoteBytes: 88, FetchWait: 8 * time.Second}
	if got != want {
		t.Fatalf("Shuffle() = %+v, want %+v", got, want)
	}
	if got.ReadBytes() != 144 {
		t.Fatalf("ReadBytes() = %d, want 144", got.ReadBytes())
	}
}

func TestMetricsOutsideATaskAreIgnored(t *testing.T) {
	m := MetricsFrom(context.Background())
	if m != nil {
		t.Fatalf("MetricsFrom(background) = %v, want nil", m)
	}
	m.AddShuffle(ShuffleMetrics{BytesWritten: 1}) // must not panic
	if got := m.Shuffle(); got != (ShuffleMetrics{}) {
		t.Fatalf("nil Metrics.Shuffle() = %+v, want zero", got)
	}
}
