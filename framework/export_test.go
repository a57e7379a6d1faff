package framework

import "context"

// FlushEvents waits until every listener has handled the events posted so
// far, so a test can read a listener's state (metrics, the UI store) after
// the events that produced it.
func (c *Context) FlushEvents(ctx context.Context) error { return c.bus.Flush(ctx) }
