package formats_test

import (
	"context"
	"regexp"
	"slices"
	"testing"

	"github.com/flint-mesos/flint/framework"
	"github.com/flint-mesos/flint/internal/testkit/s3server"
	"github.com/flint-mesos/flint/internal/testkit/secretcheck"
	"github.com/flint-mesos/flint/internal/testkit/threemode"
)

// masterAt is the embedded master's URL as the driver logs it when it starts the cluster.
var masterAt = regexp.MustCompile(`started the embedded Mesos master at (http://[^ "]+)`)

// Each format is written to the real S3 server and read back, split, by the tasks of each mode:
// in the driver process (local), and by executors on the embedded cluster's agents (coarse,
// fine), which reach the server with the keys the driver's configuration holds, sent to them
// as Mesos secrets only. Afterwards no key is in the master's or agents' /state, the driver's
// log, or any file the agents wrote (sandboxes: executors' stdout and stderr).
func TestEveryFormatOnS3ThreeModes(t *testing.T) {
	var want []row
	for i := range int64(3000) {
		want = append(want, makeRow(i))
	}
	fs := testFS(t, shared)
	for _, m := range threemode.All {
		threemode.RunIn(t, []threemode.Mode{m}, func(t *testing.T, fc *framework.Context) {
			for _, f := range []string{"csv", "json", "parquet"} {
				out := "s3://" + sharedBucket + "/" + string(m) + "/" + f
				if _, err := saveJob.Run(t.Context(), fc, args{Format: f, N: 3000, Out: out}); err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				got, err := readJob.Run(t.Context(), fc, args{Format: f, Out: out})
				if err != nil {
					t.Fatalf("%s: %v", f, err)
				}
				if !slices.Equal(got, want) {
					t.Fatalf("%s: read back %d rows, not the 3000 written", f, len(got))
				}
				if ups, err := fs.Uploads(context.Background(), out); err != nil || len(ups) != 0 {
					t.Fatalf("%s: uploads left open: %v (%v)", f, ups, err)
				}
			}
			if m == threemode.Local {
				return
			}
			log := threemode.DriverLog(m)
			at := masterAt.FindStringSubmatch(log)
			if at == nil {
				t.Fatalf("the driver's log does not say where the embedded master is:\n%s", log)
			}
			secretcheck.NowhereElse(t, fc, at[1], func() string { return threemode.DriverLog(m) }, threemode.WorkDir(m),
				[]string{s3server.AccessKey, s3server.SecretKey})
		})
	}
}
