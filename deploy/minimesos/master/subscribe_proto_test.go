package master_test

import (
	"bufio"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler/calls"

	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest"
)

// The SUBSCRIBE-only answers with protobuf requests: 406 when Accept
// names neither codec, 400 when a Mesos-Stream-Id is sent; and the
// stream's media type follows Accept, not the request's.
func TestSubscribeOnlyAnswersProtobuf(t *testing.T) {
	s := minimesostest.NewServer(t)
	body, err := calls.Subscribe(frameworkInfo("pb")).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	const pb = "application/x-protobuf"
	for _, tc := range []struct {
		name, accept string
		hdr          map[string]string
		code         int
		ct           string
	}{
		{"unknown accept", "text/html", nil, http.StatusNotAcceptable, ""},
		{"unknown accepts", "text/html, application/xml;q=0.9", nil, http.StatusNotAcceptable, ""},
		{"stream id", pb, map[string]string{"Mesos-Stream-Id": "0f9b6c2e-6d1c-4c55-9d43-3a8f2b1e7d00"}, http.StatusBadRequest, ""},
		{"stream id, no accept", "", map[string]string{"Mesos-Stream-Id": "x"}, http.StatusBadRequest, ""},
		{"accept protobuf", pb, nil, http.StatusOK, pb},
		{"accept json", "application/json", nil, http.StatusOK, "application/json"},
	} {
		res := post(t, s.SchedulerURL(), pb, tc.accept, body, tc.hdr)
		if res.StatusCode != tc.code {
			b, _ := io.ReadAll(res.Body)
			t.Errorf("%s: %d %q, want %d", tc.name, res.StatusCode, b, tc.code)
			continue
		}
		if tc.code != http.StatusOK {
			if res.Header.Get("Mesos-Stream-Id") != "" {
				t.Errorf("%s: a stream id with a %d", tc.name, res.StatusCode)
			}
			continue
		}
		if got := res.Header.Get("Content-Type"); got != tc.ct || res.Header.Get("Mesos-Stream-Id") == "" {
			t.Errorf("%s: Content-Type %q, stream id %q", tc.name, got, res.Header.Get("Mesos-Stream-Id"))
			continue
		}
		// The first record decodes as SUBSCRIBED in the announced codec.
		r := bufio.NewReader(res.Body)
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(line))
		if err != nil {
			t.Fatalf("%s: record length %q", tc.name, line)
		}
		rec := make([]byte, n)
		if _, err := io.ReadFull(r, rec); err != nil {
			t.Fatal(err)
		}
		var e scheduler.Event
		if tc.ct == pb {
			err = e.Unmarshal(rec)
		} else {
			err = e.UnmarshalJSON(rec)
		}
		if err != nil || e.GetType() != scheduler.Event_SUBSCRIBED {
			t.Errorf("%s: first event %v %v", tc.name, &e, err)
		}
	}
	// Refused subscriptions registered nothing; the two streams did.
	if d := getState(t, s); len(d.Frameworks) != 2 {
		t.Fatalf("frameworks %+v", d.Frameworks)
	}
}
