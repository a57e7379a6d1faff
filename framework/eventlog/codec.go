package eventlog

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/flint-mesos/flint/framework/event"
)

// record is one line of a log.
type record struct {
	Event string          `json:"Event"`
	Body  json.RawMessage `json:"Body"`
}

// jobEnd is JobEnd on disk: its error as text.
type jobEnd struct {
	Time  time.Time
	JobID int64
	Error string `json:",omitempty"`
}

// errUnknownEvent marks a line of a type this Flint does not know.
var errUnknownEvent = errors.New("unknown event type")

// Encode returns e as one JSON line (without the newline).
func Encode(e event.Event) ([]byte, error) {
	var name string
	var body any = e
	switch e := e.(type) {
	case event.ApplicationStart:
		name = "ApplicationStart"
	case event.ApplicationEnd:
		name = "ApplicationEnd"
	case event.EnvironmentUpdate:
		name = "EnvironmentUpdate"
	case event.JobStart:
		name = "JobStart"
	case event.JobEnd:
		name = "JobEnd"
		je := jobEnd{Time: e.Time, JobID: e.JobID}
		if e.Err != nil {
			je.Error = e.Err.Error()
		}
		body = je
	case event.StageSubmitted:
		name = "StageSubmitted"
	case event.StageCompleted:
		name = "StageCompleted"
	case event.TaskStart:
		name = "TaskStart"
	case event.TaskEnd:
		name = "TaskEnd"
	case event.ExecutorAdded:
		name = "ExecutorAdded"
	case event.ExecutorRemoved:
		name = "ExecutorRemoved"
	default:
		return nil, fmt.Errorf("eventlog: %w %T", errUnknownEvent, e)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("eventlog: encode %s: %w", name, err)
	}
	return json.Marshal(record{Event: name, Body: b})
}

func decodeAs[T event.Event](body json.RawMessage) (event.Event, error) {
	var v T
	err := json.Unmarshal(body, &v)
	return v, err
}

var decoders = map[string]func(json.RawMessage) (event.Event, error){
	"ApplicationStart":  decodeAs[event.ApplicationStart],
	"ApplicationEnd":    decodeAs[event.ApplicationEnd],
	"EnvironmentUpdate": decodeAs[event.EnvironmentUpdate],
	"JobStart":          decodeAs[event.JobStart],
	"StageSubmitted":    decodeAs[event.StageSubmitted],
	"StageCompleted":    decodeAs[event.StageCompleted],
	"TaskStart":         decodeAs[event.TaskStart],
	"TaskEnd":           decodeAs[event.TaskEnd],
	"ExecutorAdded":     decodeAs[event.ExecutorAdded],
	"ExecutorRemoved":   decodeAs[event.ExecutorRemoved],
	"JobEnd": func(body json.RawMessage) (event.Event, error) {
		var je jobEnd
		if err := json.Unmarshal(body, &je); err != nil {
			return nil, err
		}
		e := event.JobEnd{Time: je.Time, JobID: je.JobID}
		if je.Error != "" {
			e.Err = errors.New(je.Error)
		}
		return e, nil
	},
}

// Decode parses one line. An unknown event type wraps errUnknownEvent.
func Decode(line []byte) (event.Event, error) {
	var r record
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, fmt.Errorf("eventlog: %w", err)
	}
	dec := decoders[r.Event]
	if dec == nil {
		return nil, fmt.Errorf("eventlog: %w %q", errUnknownEvent, r.Event)
	}
	e, err := dec(r.Body)
	if err != nil {
		return nil, fmt.Errorf("eventlog: %s: %w", r.Event, err)
	}
	return e, nil
}
