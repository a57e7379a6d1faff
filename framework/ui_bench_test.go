package framework_test

import (
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/event"
	"github.com/flint-mesos/flint/internal/driverseam"
)

var noopUI = framework.Register("test.ui.noop", func(_ context.Context, x int) (int, error) { return x, nil })

// BenchmarkEmptyTasksUI runs jobs of 100,000 no-op tasks on local[*] with
// the web UI (its store and metrics listening to every task's events) off
// and on, and reports tasks/s and, with the UI on, the share of task events
// the UI's queue had to drop.
func BenchmarkEmptyTasksUI(b *testing.B) {
	const n = 100_000
	for _, c := range []struct {
		name, ui string
		opts     []framework.Option
	}{
		{"ui=false", "false", nil},
		// Events built and posted, delivered to a listener that does nothing.
		{"ui=false,noop-listener", "false", []framework.Option{framework.WithListener(event.ListenerFunc(func(event.Event) {}))}},
		{"ui=true", "true", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			fc := benchContext(b, c.opts, "flint.master=local[*]", "flint.ui.enabled="+c.ui, "flint.ui.port=0")
			in := make([]int, n)
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				if _, err := framework.Map(context.Background(), fc, noopUI, in); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(n*b.N)/time.Since(start).Seconds(), "tasks/s")
			b.StopTimer()
			if st := driverseam.Of(fc).UIStore; st != nil {
				_ = fc.Stop(context.Background()) // delivers every queued event
				done := 0
				for _, j := range st.Jobs() {
					done += j.NumCompletedTasks
				}
				b.ReportMetric(100*(1-float64(done)/float64(n*b.N)), "%events-dropped")
			}
		})
	}
}

func benchContext(b *testing.B, opts []framework.Option, conf ...string) *framework.Context {
	b.Helper()
	cfg := framework.NewConfig()
	for _, kv := range conf {
		k, v, _ := strings.Cut(kv, "=")
		if err := cfg.Set(k, v); err != nil {
			b.Fatal(err)
		}
	}
	log := logrus.New()
	log.SetOutput(io.Discard)
	fc, err := framework.NewContext(context.Background(), cfg, append(opts, framework.WithLogger(log))...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = fc.Stop(context.Background()) })
	return fc
}
