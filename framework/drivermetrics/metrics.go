package drivermetrics

import (
	"net/http"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/flint-mesos/flint/framework/event"
)

// Conn is one driver's Mesos connection counters: a
// framework/mesosconn.Metrics handed to its backend (backend.Params), not
// a process-wide variable, so two drivers in one process count apart.
type Conn struct {
	offersReceived  prometheus.Counter
	offersDeclined  *prometheus.CounterVec
	resubscriptions prometheus.Counter
}

// NewConn returns connection counters at zero.
func NewConn() *Conn {
	return &Conn{
		offersReceived: counter("flint_mesos_offers_received_total", "Resource offers received from the Mesos master."),
		offersDeclined: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "flint_mesos_offers_declined_total",
			Help: "Resource offers declined, by reason."}, []string{"reason"}),
		resubscriptions: counter("flint_mesos_resubscriptions_total",
			"SUBSCRIBED events after the first: the connection to the master was lost and re-established."),
	}
}

// OffersReceived counts n offers received.
func (m *Conn) OffersReceived(n int) { m.offersReceived.Add(float64(n)) }

// OffersDeclined counts n offers declined for reason.
func (m *Conn) OffersDeclined(reason string, n int) {
	m.offersDeclined.WithLabelValues(reason).Add(float64(n))
}

// Resubscribed counts a re-subscription.
func (m *Conn) Resubscribed() { m.resubscriptions.Inc() }

// TaskDurationBuckets are the task duration histogram's buckets, in seconds:
// from 1 ms to about 17 minutes.
var TaskDurationBuckets = prometheus.ExponentialBuckets(0.001, 4, 11)

// Listener counts an application's events.
type Listener struct {
	jobsStarted, stagesSubmitted, tasksStarted prometheus.Counter
	jobsEnded, stagesEnded, tasksEnded         *prometheus.CounterVec
	jobsRunning, stagesActive, tasksRunning    prometheus.Gauge
	executors                                  prometheus.Gauge
	executorsAdded, executorsRemoved           prometheus.Counter
	taskDuration                               *prometheus.HistogramVec
	resultBytes, shuffleRead, shuffleWrite     prometheus.Counter
	all                                        []prometheus.Collector
	live                                       map[string]bool // executors added and not removed
}

var _ event.Listener = (*Listener)(nil)

// NewListener returns a listener with its metrics at zero.
func NewListener() *Listener {
	l := &Listener{
		jobsStarted:     counter("flint_jobs_started_total", "Jobs submitted."),
		stagesSubmitted: counter("flint_stages_submitted_total", "Stage attempts submitted."),
		tasksStarted:    counter("flint_tasks_started_total", "Task attempts launched."),
		jobsEnded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "flint_jobs_ended_total",
			Help: "Jobs ended, by state (succeeded, failed)."}, []string{"state"}),
		stagesEnded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "flint_stages_ended_total",
			Help: "Stage attempts ended, by state (complete, failed)."}, []string{"state"}),
		tasksEnded: prometheus.NewCounterVec(prometheus.CounterOpts{Name: "flint_tasks_ended_total",
			Help: "Task attempts ended, by state (finished, failed, killed, lost)."}, []string{"state"}),
		jobsRunning:      gauge("flint_jobs_running", "Jobs running now."),
		stagesActive:     gauge("flint_stages_active", "Stage attempts running now."),
		tasksRunning:     gauge("flint_tasks_running", "Task attempts running now."),
		executors:        gauge("flint_executors", "Executors registered now."),
		executorsAdded:   counter("flint_executors_added_total", "Executors registered."),
		executorsRemoved: counter("flint_executors_removed_total", "Executors lost or stopped."),
		taskDuration: prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "flint_task_duration_seconds",
			Help: "Wall time of task attempts from launch to end, by state.", Buckets: TaskDurationBuckets}, []string{"state"}),
		resultBytes:  counter("flint_task_result_bytes_total", "Bytes of task results sent to the driver."),
		shuffleRead:  counter("flint_shuffle_read_bytes_total", "Shuffle bytes tasks fetched."),
		shuffleWrite: counter("flint_shuffle_write_bytes_total", "Shuffle bytes tasks wrote."),
		live:         map[string]bool{},
	}
	l.all = []prometheus.Collector{l.jobsStarted, l.stagesSubmitted, l.tasksStarted, l.jobsEnded, l.stagesEnded, l.tasksEnded,
		l.jobsRunning, l.stagesActive, l.tasksRunning, l.executors, l.executorsAdded, l.executorsRemoved, l.taskDuration,
		l.resultBytes, l.shuffleRead, l.shuffleWrite}
	for _, s := range []string{"succeeded", "failed"} {
		l.jobsEnded.WithLabelValues(s)
	}
	for _, s := range []string{"complete", "failed"} {
		l.stagesEnded.WithLabelValues(s)
	}
	for _, s := range []string{"finished", "failed", "killed", "lost"} {
		l.tasksEnded.WithLabelValues(s)
	}
	return l
}

func counter(name, help string) prometheus.Counter {
	return prometheus.NewCounter(prometheus.CounterOpts{Name: name, Help: help})
}

func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

// OnEvent updates the metrics. It is called from one goroutine.
func (l *Listener) OnEvent(e event.Event) {
	switch e := e.(type) {
	case event.JobStart:
		l.jobsStarted.Inc()
		l.jobsRunning.Inc()
	case event.JobEnd:
		l.jobsRunning.Dec()
		state := "succeeded"
		if e.Err != nil {
			state = "failed"
		}
		l.jobsEnded.WithLabelValues(state).Inc()
	case event.StageSubmitted:
		l.stagesSubmitted.Inc()
		l.stagesActive.Inc()
	case event.StageCompleted:
		l.stagesActive.Dec()
		state := "complete"
		if e.FailureReason != "" {
			state = "failed"
		}
		l.stagesEnded.WithLabelValues(state).Inc()
	case event.TaskStart:
		l.tasksStarted.Inc()
		l.tasksRunning.Inc()
	case event.TaskEnd:
		l.onTaskEnd(e)
	case event.ExecutorAdded:
		if !l.live[e.ExecutorID] {
			l.live[e.ExecutorID] = true
			l.executors.Inc()
			l.executorsAdded.Inc()
		}
	case event.ExecutorRemoved:
		// An executor lost before it was up was never counted.
		if l.live[e.ExecutorID] {
			delete(l.live, e.ExecutorID)
			l.executors.Dec()
			l.executorsRemoved.Inc()
		}
	}
}

func (l *Listener) onTaskEnd(e event.TaskEnd) {
	l.tasksRunning.Dec()
	state := strings.ToLower(e.State)
	l.tasksEnded.WithLabelValues(state).Inc()
	l.taskDuration.WithLabelValues(state).Observe(e.RunTime.Seconds())
	l.resultBytes.Add(float64(e.ResultSize))
	l.shuffleRead.Add(float64(e.ShuffleReadBytes))
	l.shuffleWrite.Add(float64(e.ShuffleWriteBytes))
}

// Registry returns a registry with l's metrics, the Mesos connection's,
// Go's runtime and process collectors, and dropped, the listener bus'
// count of events dropped for slow listeners (nil to leave it out).
func Registry(l *Listener, conn *Conn, dropped func() int64) *prometheus.Registry {
	r := prometheus.NewRegistry()
	r.MustRegister(l.all...)
	if conn != nil {
		r.MustRegister(conn.offersReceived, conn.offersDeclined, conn.resubscriptions)
	}
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if dropped != nil {
		r.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "flint_listener_events_dropped_total",
			Help: "Events the listener bus dropped because a listener's queue was full."}, func() float64 { return float64(dropped()) }))
	}
	return r
}

// Handler serves r in Prometheus' text format.
func Handler(r *prometheus.Registry) http.Handler {
	return promhttp.HandlerFor(r, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}
