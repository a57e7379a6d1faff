package event

import "time"

// ApplicationStart is posted once when a Context starts, before any other
// event: what the UI and the event log name the application by.
type ApplicationStart struct {
	Time    time.Time
	AppID   string
	Name    string
	User    string
	Version string // Flint's version string
	Master  string
}

// ApplicationEnd is posted once when a Context stops, after every other
// event.
type ApplicationEnd struct {
	Time time.Time
}

// EnvironmentUpdate carries the application's effective configuration,
// secrets already redacted, and facts about the runtime (Go version,
// OS/architecture), each a sorted list of name/value pairs.
type EnvironmentUpdate struct {
	Time       time.Time
	Properties [][2]string
	Runtime    [][2]string
}

func (e ApplicationStart) eventTime() time.Time  { return e.Time }
func (e ApplicationEnd) eventTime() time.Time    { return e.Time }
func (e EnvironmentUpdate) eventTime() time.Time { return e.Time }
