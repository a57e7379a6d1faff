package master_test

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/deploy/minimesos/master"
)

// FuzzSchedulerCall posts arbitrary bodies (both codecs) to the scheduler
// API: every answer must be a Mesos status, never a panic.
func FuzzSchedulerCall(f *testing.F) {
	f.Add(true, []byte(`{"type":"REVIVE","framework_id":{"value":"f-0000"}}`))
	f.Add(true, []byte(`{"type":"ACKNOWLEDGE","framework_id":{"value":"x"},"acknowledge":null}`))
	f.Add(false, []byte{0x10, 0x03, 0x0a, 0x02, 0x0a, 0x00})
	f.Add(true, []byte(`{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n"}}}`))
	l := logrus.New()
	l.SetLevel(logrus.PanicLevel)
	m, err := master.New(master.Config{ID: "f", Logger: l, Seed: 1})
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(m.Close)
	h := m.Handler()
	f.Fuzz(func(t *testing.T, isJSON bool, body []byte) {
		ct := "application/x-protobuf"
		if isJSON {
			ct = "application/json"
		}
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		r := httptest.NewRequest(http.MethodPost, "/api/v1/scheduler", bytes.NewReader(body)).WithContext(ctx)
		r.Header.Set("Content-Type", ct)
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case 200, 202, 400, 403, 406, 415, 501:
		default:
			t.Fatalf("unexpected status %d for %q", w.Code, body)
		}
	})
}
