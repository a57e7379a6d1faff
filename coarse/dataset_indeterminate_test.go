package coarse_test

import (
	"testing"
	"time"

	"github.com/flint-mesos/flint/internal/testkit/indeterminatecheck"
	"github.com/flint-mesos/flint/internal/testkit/mesostest"
)

// Repartition after a shuffle on two hosts, with an executor killed after
// the 1st, 2nd, … task of the job: every run's sums are exact (SPARK-23207,
// the scenario of internal/testkit/indeterminatecheck, shared with fine mode).
func TestRepartitionAfterShuffleSurvivesExecutorLoss(t *testing.T) {
	// after an unordered shuffle Repartition's map stage is indeterminate:
	// kill after every task
	t.Run("partitionBy", func(t *testing.T) {
		repartitionKills(t, "partitionBy", mesostest.Ints(indeterminatecheck.Tasks + 1)[1:])
	})
	// after reduceByKey (sorted, one record per key) it is determinate:
	// a lost output is recomputed alone
	t.Run("reduceByKey", func(t *testing.T) { repartitionKills(t, "reduceByKey", []int{3, 7, 9, 12, 15, 17}) })
}

func repartitionKills(t *testing.T, before string, killPoints []int) {
	c := startCluster(t, clusterOpts{agents: 1})
	hostAgentIn(t, c, "repart-host-b", t.TempDir())()
	r := mustRun(t, mesosURL(c), "flint.executor.cores=1", "flint.task.maxFailures=8", "flint.excludeOnFailure.enabled=false",
		"flint.mesos.executor.maxFailuresPerAgent=1000")
	k := &indeterminatecheck.Killer{Procs: func() []indeterminatecheck.Proc {
		var out []indeterminatecheck.Proc
		for _, p := range r.executors() {
			out = append(out, indeterminatecheck.Proc{ExecutorID: p.executorID, PID: p.pid})
		}
		return out
	}, OnError: func(err error) { t.Error(err) }}
	r.fc.AddListener(k)
	a := indeterminatecheck.Args{Records: 30000, Keys: 997, Reduces: 4, Parts: 5, Before: before}
	indeterminatecheck.Kills(t, r.fc, k, a, killPoints, indeterminatecheck.Options{Ready: func(t *testing.T) {
		waitFor(t, 60*time.Second, "4 executors on 2 hosts", func() bool {
			return len(r.executors()) == 4 && r.fc.DefaultParallelism() == 4
		})
	}})
}
