package mesosconn

// Metrics counts what a connection sees: the driver's Prometheus counters
// (framework/drivermetrics.Conn, one per driver, registered with its
// /metrics), or a test's. The connection writes no package-global
// counter; a Config without Metrics counts nothing.
type Metrics interface {
	OffersReceived(n int)
	// OffersDeclined counts n offers declined for reason (a
	// DeclineReason's String with spaces as underscores).
	OffersDeclined(reason string, n int)
	// Resubscribed counts a SUBSCRIBED after the first.
	Resubscribed()
}

// WithMetrics sets the connection's counters.
func WithMetrics(m Metrics) Option { return func(c *Config) { c.Metrics = m } }

type noMetrics struct{}

func (noMetrics) OffersReceived(int)         {}
func (noMetrics) OffersDeclined(string, int) {}
func (noMetrics) Resubscribed()              {}

// metrics is the connection's counters (none when the Config has none).
func (c *Conn) metrics() Metrics {
	if c.cfg.Metrics == nil {
		return noMetrics{}
	}
	return c.cfg.Metrics
}
