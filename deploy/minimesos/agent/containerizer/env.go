package containerizer

import (
	"sort"
	"strconv"
	"strings"
	"time"

	mesos "github.com/mesos/mesos-go/api/v1/lib"
)

// FormatDuration formats d the way Mesos' stout library prints durations
// ("5secs", "15mins", "2secs", "100ms"): the largest unit the value reaches,
// with a decimal fraction when needed. mesos-go's executor configuration
// parses only this format.
func FormatDuration(d time.Duration) string {
	units := []struct {
		name string
		size time.Duration
	}{
		{"weeks", 7 * 24 * time.Hour},
		{"days", 24 * time.Hour},
		{"hrs", time.Hour},
		{"mins", time.Minute},
		{"secs", time.Second},
		{"ms", time.Millisecond},
		{"us", time.Microsecond},
	}
	for _, u := range units {
		if d >= u.size || -d >= u.size {
			v := float64(d) / float64(u.size)
			return strconv.FormatFloat(v, 'f', -1, 64) + u.name
		}
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// ExecutorEnv describes the MESOS_* environment of one executor.
type ExecutorEnv struct {
	FrameworkID   string
	ExecutorID    string
	AgentID       string
	Sandbox       string
	AgentEndpoint string // ip:port of the agent's HTTP server
	ShutdownGrace time.Duration
	Checkpoint    bool
	// RecoveryTimeout and SubscriptionBackoffMax are set when Checkpoint is.
	RecoveryTimeout        time.Duration
	SubscriptionBackoffMax time.Duration
	HTTPCommandExecutor    bool
}

// Vars returns the MESOS_* variables Mesos' agent gives an executor.
func (e ExecutorEnv) Vars() map[string]string {
	v := map[string]string{
		"MESOS_FRAMEWORK_ID":                   e.FrameworkID,
		"MESOS_EXECUTOR_ID":                    e.ExecutorID,
		"MESOS_DIRECTORY":                      e.Sandbox,
		"MESOS_SANDBOX":                        e.Sandbox,
		"MESOS_AGENT_ENDPOINT":                 e.AgentEndpoint,
		"MESOS_EXECUTOR_SHUTDOWN_GRACE_PERIOD": FormatDuration(e.ShutdownGrace),
		"MESOS_SLAVE_ID":                       e.AgentID,
		"MESOS_SLAVE_PID":                      "slave(1)@" + e.AgentEndpoint,
		"MESOS_CHECKPOINT":                     boolEnv(e.Checkpoint),
		"MESOS_HTTP_COMMAND_EXECUTOR":          boolEnv(e.HTTPCommandExecutor),
	}
	if e.Checkpoint {
		v["MESOS_RECOVERY_TIMEOUT"] = FormatDuration(e.RecoveryTimeout)
		v["MESOS_SUBSCRIPTION_BACKOFF_MAX"] = FormatDuration(e.SubscriptionBackoffMax)
	}
	return v
}

func boolEnv(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// BuildEnv returns the environment of a launched process: base (the
// inherited environment, "K=V" entries), then vars, then the command's own
// environment; later sources override earlier ones. Variables of type
// SECRET are skipped here: Launch resolves them (resolveSecrets), so their
// values are in the process's environment only.
func BuildEnv(base []string, vars map[string]string, cmd *mesos.Environment) []string {
	m := make(map[string]string, len(base)+len(vars))
	for _, kv := range base {
		if k, v, ok := strings.Cut(kv, "="); ok {
			m[k] = v
		}
	}
	for k, v := range vars {
		m[k] = v
	}
	if cmd != nil {
		for _, ev := range cmd.Variables {
			if ev.Type != nil && *ev.Type == mesos.Environment_Variable_SECRET {
				continue
			}
			m[ev.Name] = ev.GetValue()
		}
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
