package dataset_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/flint-mesos/flint/framework/dataset"
	"github.com/flint-mesos/flint/framework/storage"
	"github.com/flint-mesos/flint/internal/testkit/s3server"
	"github.com/flint-mesos/flint/internal/testkit/waitfor"
)

// The attempt of lastSweepJob's partition 1 closes lastSweepStarted, waits on
// lastSweepGate, then leaves an open upload under the output as an attempt does that dies
// between creating its upload and looking for the job's marker, and closes lastSweepLeaked
// (local mode: one process). Partition 0 fails once partition 1 runs, so the job ends with
// partition 1's attempt still running (failing first, it could end the job before partition
// 1 was launched at all).
var lastSweepStarted, lastSweepGate, lastSweepLeaked chan struct{}

type lastSweepArgs struct{ Out, Endpoint string }

var lastSweepJob = dataset.Job("test.files.lastSweep", func(b *dataset.Builder, a lastSweepArgs) error {
	xs := dataset.Range(b, 0, 100, 2)
	lines := dataset.MapPartitions(xs, func(p int, records func(func(int64) bool), yield func(string)) error {
		for x := range records {
			yield(fmt.Sprintf("record %d", x))
		}
		if p == 0 {
			<-lastSweepStarted
			return errors.New("this partition always fails")
		}
		close(lastSweepStarted)
		<-lastSweepGate
		defer close(lastSweepLeaked)
		return leakUpload(a.Endpoint, strings.TrimPrefix(a.Out, "s3://out/")+"/part-00001")
	})
	return dataset.SaveAsTextFile(lines, a.Out)
})

// leakUpload creates a multipart upload of key in bucket out and leaves it open.
func leakUpload(endpoint, key string) error {
	c := s3.New(s3.Options{Region: s3server.Region, BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials: credentials.NewStaticCredentialsProvider(s3server.AccessKey, s3server.SecretKey, "")})
	_, err := c.CreateMultipartUpload(context.Background(), &s3.CreateMultipartUploadInput{Bucket: aws.String("out"), Key: aws.String(key)})
	return err
}

// The commit protocol's one gap a marker cannot close — an attempt of an ended job that
// creates its upload after the job's sweep listed and dies before it sees the marker — is
// closed by the last sweep, once every attempt launched before the job ended has ended.
func TestLastSweepDiscardsTheUploadOfAnAttemptThatOutlivedItsJob(t *testing.T) {
	srv := s3server.Start(t, []string{"out"})
	ctx := s3Context(t, srv)
	fs := testFS(t, srv)
	lastSweepStarted, lastSweepGate, lastSweepLeaked = make(chan struct{}), make(chan struct{}), make(chan struct{})
	fc := localContext(t, s3conf(srv, "flint.master", "local[2]", "flint.task.maxFailures", "1")...)
	_, err := lastSweepJob.Run(ctx, fc, lastSweepArgs{Out: "s3://out/late", Endpoint: srv.Endpoint})
	if err == nil || !strings.Contains(err.Error(), "always fails") {
		t.Fatalf("err = %v, want partition 0's failure", err)
	}
	if got := s3Files(t, fs, "s3://out/late"); !slices.Equal(got, []string{storage.AbortMarker}) {
		t.Fatalf("the failed job left %v, want only its %s marker", got, storage.AbortMarker)
	}
	close(lastSweepGate) // partition 1's attempt, still running, leaks its upload and ends
	<-lastSweepLeaked
	waitfor.True(t, 30*time.Second, "the last sweep to discard the attempt's upload", func() bool {
		ups, err := fs.Uploads(context.Background(), "s3://out/late")
		return err == nil && len(ups) == 0
	})
}
