package flintpb_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/proto/flintpb"
)

func TestSettingsRoundTripWithTheirVersion(t *testing.T) {
	in := &flintpb.ExecutorSettings{TaskCpus: 2, MaxDirectResultSize: 1 << 20, ResultSecret: "0123456789abcdef",
		Shuffle: &flintpb.ShuffleSettings{AppId: "app", Token: "token", Tls: true, LocalDir: "/d", MemoryBytes: 1 << 30,
			Codec: flintpb.ShuffleCodec_SHUFFLE_CODEC_NONE, MaxBytesInFlight: 48 << 20, MaxReqsInFlight: 7, MaxRetries: 3,
			RetryWaitNanos: 5e9, ConnectionTimeoutNanos: 12e10, ServiceDir: "/srv"},
		JobSettings: map[string]string{"app.name": "x"}, JobSecrets: map[string]string{"s.secret": "y"}}
	data, err := flintpb.EncodeSettings(in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := flintpb.DecodeSettings(data)
	if err != nil {
		t.Fatal(err)
	}
	in.Version = flintpb.SettingsVersion
	if !reflect.DeepEqual(out, in) {
		t.Fatalf("decoded %+v, want %+v at version %d", out, in, flintpb.SettingsVersion)
	}
}

func TestSettingsOfAnotherVersionOrNoneAreRefused(t *testing.T) {
	old, err := (&flintpb.ExecutorSettings{Version: flintpb.SettingsVersion - 1, TaskCpus: 1}).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"older": old, "empty": nil, "garbage": []byte{0xff, 0xff}} {
		if _, err := flintpb.DecodeSettings(data); err == nil {
			t.Errorf("%s settings decoded", name)
		}
	}
	if err := flintpb.CheckSettingsVersion(nil); err == nil || !strings.Contains(err.Error(), "no executor settings") {
		t.Errorf("CheckVersion(nil) = %v, want a missing-settings error", err)
	}
}
