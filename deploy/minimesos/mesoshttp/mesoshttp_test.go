package mesoshttp

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
	"github.com/mesos/mesos-go/api/v1/lib/recordio"
	"github.com/mesos/mesos-go/api/v1/lib/scheduler"
)

func TestContentType(t *testing.T) {
	cases := []struct {
		in   string
		want MediaType
		err  error
	}{
		{"", "", ErrNoContentType},
		{"application/json", JSON, nil},
		{"application/json; charset=utf-8", JSON, nil},
		{"Application/X-Protobuf", Protobuf, nil},
		{"text/plain", "", ErrUnsupportedMediaType},
		{"application/recordio", "", ErrUnsupportedMediaType},
		{";;;", "", ErrUnsupportedMediaType},
	}
	for _, c := range cases {
		h := http.Header{}
		if c.in != "" {
			h.Set("Content-Type", c.in)
		}
		got, err := ContentType(h)
		if got != c.want || !errors.Is(err, c.err) {
			t.Errorf("ContentType(%q) = %q, %v; want %q, %v", c.in, got, err, c.want, c.err)
		}
	}
}

func TestNegotiate(t *testing.T) {
	cases := []struct {
		accept string
		want   MediaType
		ok     bool
	}{
		{"", JSON, true},
		{"*/*", JSON, true},
		{"application/*", JSON, true},
		{"application/x-protobuf", Protobuf, true},
		{"application/json", JSON, true},
		{"application/json;q=0, application/x-protobuf", Protobuf, true},
		{"text/html", "", false},
		{"application/json;q=0", "", false},
		{"text/*, application/x-protobuf;q=0.5", Protobuf, true},
	}
	for _, c := range cases {
		got, ok := Negotiate(c.accept)
		if got != c.want || ok != c.ok {
			t.Errorf("Negotiate(%q) = %q, %v; want %q, %v", c.accept, got, ok, c.want, c.ok)
		}
	}
}

func sampleCall() *scheduler.Call {
	fid := mesos.FrameworkID{Value: "m-0000"}
	return &scheduler.Call{
		Type:        scheduler.Call_ACKNOWLEDGE,
		FrameworkID: &fid,
		Acknowledge: &scheduler.Call_Acknowledge{
			AgentID: mesos.AgentID{Value: "m-S1"},
			TaskID:  mesos.TaskID{Value: "t1"},
			UUID:    bytes.Repeat([]byte{7}, 16),
		},
	}
}

func TestDecodeRoundTrip(t *testing.T) {
	for _, mt := range []MediaType{Protobuf, JSON} {
		b, err := Encode(mt, sampleCall())
		if err != nil {
			t.Fatal(err)
		}
		var got scheduler.Call
		if err := Decode(mt, b, &got); err != nil {
			t.Fatalf("%s: %v", mt, err)
		}
		if !got.Equal(sampleCall()) {
			t.Fatalf("%s: got %v", mt, &got)
		}
	}
}

func TestDecodeJSONNullsAndEnumNames(t *testing.T) {
	body := `{"type":"SUBSCRIBE","subscribe":{"framework_info":{"user":"u","name":"n",
	"roles":null,"capabilities":[{"type":"MULTI_ROLE"}]},"suppressed_roles":null}}`
	var c scheduler.Call
	if err := Decode(JSON, []byte(body), &c); err != nil {
		t.Fatal(err)
	}
	if c.GetType() != scheduler.Call_SUBSCRIBE || c.Subscribe.FrameworkInfo.Name != "n" ||
		c.Subscribe.FrameworkInfo.Capabilities[0].GetType() != mesos.FrameworkInfo_Capability_MULTI_ROLE {
		t.Fatalf("got %v", &c)
	}
	for _, bad := range []string{`{"type":"NOPE"}`, `{`, `[]`, `{"type":"SUBSCRIBE"} {}`} {
		if err := Decode(JSON, []byte(bad), &scheduler.Call{}); err == nil {
			t.Errorf("Decode(%q) succeeded", bad)
		}
	}
	if err := Decode(Protobuf, []byte{0xff, 0xff}, &scheduler.Call{}); err == nil {
		t.Error("garbage protobuf decoded")
	}
	if err := Decode("text/plain", nil, &scheduler.Call{}); !errors.Is(err, ErrUnsupportedMediaType) {
		t.Error(err)
	}
}

func TestDecodeRequestAnswers(t *testing.T) {
	pb, _ := Encode(Protobuf, sampleCall())
	cases := []struct {
		method, ct string
		body       []byte
		code       int
	}{
		{"GET", "application/json", nil, 405},
		{"POST", "", pb, 400},
		{"POST", "text/plain", pb, 415},
		{"POST", "application/json", []byte("{"), 400},
		{"POST", "application/x-protobuf", bytes.Repeat([]byte{1}, 100), 400},
		{"POST", "application/x-protobuf", pb, 0},
	}
	for _, c := range cases {
		r := httptest.NewRequest(c.method, "/api/v1/scheduler", bytes.NewReader(c.body))
		if c.ct != "" {
			r.Header.Set("Content-Type", c.ct)
		}
		w := httptest.NewRecorder()
		var call scheduler.Call
		_, ok := DecodeRequest(w, r, 64, &call)
		if c.code == 0 {
			if !ok {
				t.Errorf("%v: rejected with %d %s", c, w.Code, w.Body)
			}
			continue
		}
		if ok || w.Code != c.code {
			t.Errorf("%s %s: ok=%v code=%d, want %d", c.method, c.ct, ok, w.Code, c.code)
		}
		if w.Code == 405 && w.Header().Get("Allow") != "POST" {
			t.Error("405 without Allow")
		}
	}
}

func TestErrorHelpers(t *testing.T) {
	w := httptest.NewRecorder()
	Unauthorized(w, "mesos-master-scheduler", "nope")
	if w.Code != 401 || w.Header().Get("WWW-Authenticate") != `Basic realm="mesos-master-scheduler"` || w.Body.String() != "nope" {
		t.Fatalf("%d %v %q", w.Code, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	Accepted(w)
	if w.Code != 202 || w.Body.Len() != 0 {
		t.Fatal(w.Code)
	}
	w = httptest.NewRecorder()
	OKEmpty(w, JSON)
	if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" || w.Header().Get("Content-Length") != "0" {
		t.Fatal(w.Header())
	}
	for code, f := range map[int]func(http.ResponseWriter){
		406: NotAcceptable, 501: func(w http.ResponseWriter) { NotImplemented(w, "x") },
		403: func(w http.ResponseWriter) { Forbidden(w, "x") },
	} {
		w := httptest.NewRecorder()
		f(w)
		if w.Code != code || !strings.HasPrefix(w.Header().Get("Content-Type"), "text/plain") {
			t.Errorf("%d: %d %v", code, w.Code, w.Header())
		}
	}
}

func TestRecordReader(t *testing.T) {
	var buf []byte
	recs := [][]byte{[]byte("hello"), {}, bytes.Repeat([]byte("x"), 1000)}
	for _, r := range recs {
		buf = AppendRecord(buf, r)
	}
	rr := NewRecordReader(bytes.NewReader(buf), 0)
	for i, want := range recs {
		got, err := rr.ReadRecord()
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("record %d: %q %v", i, got, err)
		}
	}
	if _, err := rr.ReadRecord(); err != io.EOF {
		t.Fatalf("want EOF, got %v", err)
	}
	bad := map[string]error{
		"99999999999999999999999\n": ErrRecordTooLarge,
		"5\nabc":                    io.ErrUnexpectedEOF,
		"9":                         io.ErrUnexpectedEOF,
		"x\n":                       ErrBadFraming,
		"\n":                        ErrBadFraming,
		"-1\n":                      ErrBadFraming,
	}
	for in, want := range bad {
		_, err := NewRecordReader(strings.NewReader(in), 10).ReadRecord()
		if !errors.Is(err, want) {
			t.Errorf("%q: got %v want %v", in, err, want)
		}
	}
}

func TestStreamConcurrentAndMesosGoReadable(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s := StartStream(w, JSON, map[string]string{"Mesos-Stream-Id": "abc"})
		var wg sync.WaitGroup
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for j := 0; j < 25; j++ {
					_ = s.Send(&scheduler.Event{Type: scheduler.Event_HEARTBEAT})
				}
			}()
		}
		wg.Wait()
		s.Close()
		if err := s.Send(&scheduler.Event{}); !errors.Is(err, ErrStreamClosed) {
			t.Errorf("send after close: %v", err)
		}
	}))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.ContentLength != -1 || res.Header.Get("Content-Type") != "application/json" ||
		res.Header.Get("Mesos-Stream-Id") != "abc" || len(res.TransferEncoding) == 0 {
		t.Fatalf("headers: %v len=%d te=%v", res.Header, res.ContentLength, res.TransferEncoding)
	}
	rd := recordio.NewReader(res.Body)
	n := 0
	for {
		b, err := rd.ReadFrame()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var e scheduler.Event
		if err := json.Unmarshal(b, &e); err != nil || e.GetType() != scheduler.Event_HEARTBEAT {
			t.Fatalf("record %d: %q %v", n, b, err)
		}
		n++
	}
	if n != 200 {
		t.Fatalf("got %d records", n)
	}
}
