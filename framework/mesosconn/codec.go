package mesosconn

import (
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/mesos/mesos-go/api/v1/lib/encoding"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/codecs"
	"github.com/mesos/mesos-go/api/v1/lib/encoding/framing"
	mesosjson "github.com/mesos/mesos-go/api/v1/lib/encoding/json"
)

// unknownEnum is the number an enum value newer than mesos-go's protos
// decodes to from JSON: no Mesos enum uses it, so it reads as unknown,
// which is what protobuf decoding gives such a value.
const unknownEnum = 1<<31 - 1

// maxUnknownEnums bounds how many distinct unknown enum names one message
// may carry before decoding gives up.
const maxUnknownEnums = 32

// jsonCodec is mesos-go's JSON codec, except that its decoder tolerates
// enum values its protos do not know. A Mesos 1.11+ master puts the
// capability QUOTA_V2 into SUBSCRIBED.master_info, newer masters add task
// state reasons and resource kinds, and mesos-go's JSON decoding rejects
// the whole event ("unrecognized enum MasterInfo_Capability_Type value
// \"QUOTA_V2\""), so a JSON client could not even register. Protobuf
// decoding keeps such values as numbers; this decoder does the same.
var jsonCodec = encoding.Codec{
	Name:       codecs.NameJSON,
	Type:       codecs.MediaTypeJSON,
	NewEncoder: mesosjson.NewEncoder,
	NewDecoder: func(s encoding.Source) encoding.Decoder {
		dec := framing.NewDecoder(s(), unmarshalTolerant)
		return encoding.DecoderFunc(func(u encoding.Unmarshaler) error { return dec.Decode(u) })
	},
}

// unrecognizedEnum matches gogo/protobuf's UnmarshalJSONEnum error.
var unrecognizedEnum = regexp.MustCompile(`unrecognized enum \S+ value "([^"\\]*)"`)

// unmarshalTolerant decodes a JSON message like json.Unmarshal; an enum
// value the protos lack is decoded as unknownEnum and decoding retried, up
// to maxUnknownEnums times. The error names the value but not where it
// stands, so each place the name appears as a JSON value is tried in turn:
// a place whose replacement gives a type error is a string field that
// happens to hold the same text, and is left alone.
func unmarshalTolerant(data []byte, v any) error {
	err := json.Unmarshal(data, v)
	for i := 0; err != nil && i < maxUnknownEnums; i++ {
		m := unrecognizedEnum.FindStringSubmatch(err.Error())
		if m == nil {
			return err
		}
		next, ok, nextErr := replaceEnum(data, m[1], v)
		if !ok {
			return err
		}
		data, err = next, nextErr
	}
	return err
}

// replaceEnum replaces the first value-position occurrence of the JSON
// string name whose replacement does not break decoding otherwise; it
// returns the new document, whether there was one, and its decoding error.
func replaceEnum(data []byte, name string, v any) ([]byte, bool, error) {
	value := regexp.MustCompile(`[:\[,]\s*(` + regexp.QuoteMeta(strconv.Quote(name)) + `)`)
	for _, loc := range value.FindAllSubmatchIndex(data, -1) {
		edited := make([]byte, 0, len(data))
		edited = append(edited, data[:loc[2]]...)
		edited = strconv.AppendInt(edited, unknownEnum, 10)
		edited = append(edited, data[loc[3]:]...)
		err := json.Unmarshal(edited, v)
		if err == nil || unrecognizedEnum.MatchString(err.Error()) {
			return edited, true, err
		}
	}
	return nil, false, nil
}
