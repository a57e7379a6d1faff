package uistore

import (
	"fmt"
	"sort"
)

// DefaultQuantiles are Spark's taskSummary default quantiles.
var DefaultQuantiles = []float64{0, 0.25, 0.5, 0.75, 1}

// TaskMetricDistributions is Spark's TaskMetricDistributions (the metrics
// Flint has) over a stage attempt's successful tasks: each list holds the
// metric at Quantiles.
type TaskMetricDistributions struct {
	Quantiles               []float64                 `json:"quantiles"`
	Duration                []float64                 `json:"duration"`
	ExecutorDeserializeTime []float64                 `json:"executorDeserializeTime"`
	ExecutorRunTime         []float64                 `json:"executorRunTime"`
	ResultSize              []float64                 `json:"resultSize"`
	ResultSerializationTime []float64                 `json:"resultSerializationTime"`
	InputMetrics            InputMetricDistributions  `json:"inputMetrics"`
	ShuffleReadMetrics      ShuffleReadDistributions  `json:"shuffleReadMetrics"`
	ShuffleWriteMetrics     ShuffleWriteDistributions `json:"shuffleWriteMetrics"`
}

// InputMetricDistributions is Spark's InputMetricDistributions (bytes only).
type InputMetricDistributions struct {
	BytesRead []float64 `json:"bytesRead"`
}

// ShuffleReadDistributions is Spark's ShuffleReadMetricDistributions (bytes only).
type ShuffleReadDistributions struct {
	ReadBytes []float64 `json:"readBytes"`
}

// ShuffleWriteDistributions is Spark's ShuffleWriteMetricDistributions (bytes only).
type ShuffleWriteDistributions struct {
	WriteBytes []float64 `json:"writeBytes"`
}

// TaskSummary returns the distributions of a stage attempt's successful
// tasks' metrics at quantiles (each in [0, 1]; DefaultQuantiles when
// none), picking the sorted value at index min(q·n, n-1) as Spark does.
// ok is false when no task of the stage has succeeded (among those still
// remembered).
func (s *Store) TaskSummary(k StageKey, quantiles []float64) (d TaskMetricDistributions, ok bool, err error) {
	if len(quantiles) == 0 {
		quantiles = DefaultQuantiles
	}
	for _, q := range quantiles {
		if q < 0 || q > 1 {
			return d, false, fmt.Errorf("%w: quantile %v is not in [0, 1]", ErrBadQuery, q)
		}
	}
	s.mu.RLock()
	st := s.stages[k]
	if st == nil {
		s.mu.RUnlock()
		return d, false, fmt.Errorf("%w: unknown stage %d attempt %d", ErrNotFound, k.ID, k.Attempt)
	}
	var cols [8][]float64
	for i := range st.list {
		t := &st.list[i]
		if !t.ended || t.Status != TaskSuccess {
			continue
		}
		m := &t.metrics
		for c, v := range [8]int64{t.dur, m.ExecutorDeserializeTime, m.ExecutorRunTime, m.ResultSize, m.ResultSerializationTime,
			m.InputMetrics.BytesRead, m.ShuffleReadMetrics.RemoteBytesRead + m.ShuffleReadMetrics.LocalBytesRead, m.ShuffleWriteMetrics.BytesWritten} {
			cols[c] = append(cols[c], float64(v))
		}
	}
	s.mu.RUnlock()
	if len(cols[0]) == 0 {
		return d, false, nil
	}
	at := func(vs []float64) []float64 {
		sort.Float64s(vs)
		out := make([]float64, len(quantiles))
		for i, q := range quantiles {
			out[i] = vs[min(int(q*float64(len(vs))), len(vs)-1)]
		}
		return out
	}
	d = TaskMetricDistributions{Quantiles: append([]float64(nil), quantiles...), Duration: at(cols[0]),
		ExecutorDeserializeTime: at(cols[1]), ExecutorRunTime: at(cols[2]), ResultSize: at(cols[3]),
		ResultSerializationTime: at(cols[4]), InputMetrics: InputMetricDistributions{BytesRead: at(cols[5])},
		ShuffleReadMetrics: ShuffleReadDistributions{ReadBytes: at(cols[6])}, ShuffleWriteMetrics: ShuffleWriteDistributions{WriteBytes: at(cols[7])}}
	return d, true, nil
}
