package parquetfile_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/formats/parquetfile"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

type address struct {
	City string `parquet:"city"`
	Zip  int32  `parquet:"zip"`
}

type customer struct {
	ID   int64   `parquet:"id"`
	Addr address `parquet:"addr"`
}

// The files' nested structs: one without zip, one with zip as a string, one where addr is
// not a struct at all.
type (
	addressNoZip struct {
		City string `parquet:"city"`
	}
	customerNoZip struct {
		ID   int64        `parquet:"id"`
		Addr addressNoZip `parquet:"addr"`
	}
	addressZipText struct {
		City string `parquet:"city"`
		Zip  string `parquet:"zip"`
	}
	customerZipText struct {
		ID   int64          `parquet:"id"`
		Addr addressZipText `parquet:"addr"`
	}
	customerFlatAddr struct {
		ID   int64  `parquet:"id"`
		Addr string `parquet:"addr"`
	}
)

var readNestedJob = dataset.JobResult("parquetfile.test.readNested", func(b *dataset.Builder, paths []string) ([]customer, error) {
	rows, err := dataset.Collect(parquetfile.Read[customer](b, parquetfile.Options{}, paths...))
	slices.SortFunc(rows, func(x, y customer) int { return int(x.ID - y.ID) })
	return rows, err
})

// A nested struct is read field by field; a file whose nested struct lacks a field of T, has
// it with another type, or has a plain column where T has a struct fails the job on the
// driver at planning with one error naming the file, the column's path and both types.
func TestNestedSchemaMismatchFailsAtPlanning(t *testing.T) {
	threemode.RunIn(t, []threemode.Mode{threemode.Local}, func(t *testing.T, fc *framework.Context) {
		dir := t.TempDir()
		ok := filepath.Join(dir, "ok.parquet")
		writeFile(t, ok, []customer{{ID: 1, Addr: address{City: "Oslo", Zip: 150}}, {ID: 2, Addr: address{City: "Bergen", Zip: 5003}}})
		got, err := readNestedJob.Run(t.Context(), fc, []string{ok})
		if err != nil {
			t.Fatal(err)
		}
		if want := []customer{{1, address{"Oslo", 150}}, {2, address{"Bergen", 5003}}}; !slices.Equal(got, want) {
			t.Fatalf("read %v, want %v", got, want)
		}
		noZip := filepath.Join(dir, "nozip.parquet")
		writeFile(t, noZip, []customerNoZip{{ID: 1, Addr: addressNoZip{City: "Oslo"}}})
		zipText := filepath.Join(dir, "ziptext.parquet")
		writeFile(t, zipText, []customerZipText{{ID: 1, Addr: addressZipText{City: "Oslo", Zip: "0150"}}})
		flat := filepath.Join(dir, "flat.parquet")
		writeFile(t, flat, []customerFlatAddr{{ID: 1, Addr: "Oslo"}})
		for _, tc := range []struct{ path, want string }{
			{noZip, fmt.Sprintf(`parquetfile: %s has no column "addr.zip" (T has it as INT32; the file's columns: id, addr.city)`, noZip)},
			{zipText, fmt.Sprintf(`parquetfile: %s: column "addr.zip" is BYTE_ARRAY (STRING) in the file but INT32 in T`, zipText)},
			{flat, fmt.Sprintf(`parquetfile: %s: column "addr" is BYTE_ARRAY (STRING) in the file but a group (city, zip) in T`, flat)},
		} {
			_, err := readNestedJob.Run(t.Context(), fc, []string{ok, tc.path})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: err = %v\nwant %q", filepath.Base(tc.path), err, tc.want)
			}
			if err != nil && strings.Count(err.Error(), "parquetfile:") != 1 {
				t.Errorf("%s: more than one error: %v", filepath.Base(tc.path), err)
			}
		}
	})
}
