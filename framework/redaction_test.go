package framework_test

import (
	"testing"

	"github.com/flint-mesos/flint/framework/uistore"
)

// The UI and REST environment redacts what flint.redaction.regex names,
// prefix entries such as flint.executorEnv.* included.
func TestEnvironmentRedactsByRegex(t *testing.T) {
	fc := uiContext(t, "flint.executorEnv.DB_PASSWORD=pw-in-the-ui", "flint.executorEnv.GREETING=hi",
		"flint.executorEnv.DSN=postgres://u:p@h/db", `flint.redaction.regex=(?i)secret|password|token|key|\.DSN$`)
	var env uistore.ApplicationEnvironmentInfo
	getJSON(t, fc, "/api/v1/applications/"+fc.AppID()+"/environment", &env)
	props := map[string]string{}
	for _, kv := range env.SparkProperties {
		props[kv[0]] = kv[1]
	}
	if props["flint.executorEnv.DB_PASSWORD"] != "*****" || props["flint.executorEnv.DSN"] != "*****" || props["flint.executorEnv.GREETING"] != "hi" {
		t.Fatalf("environment properties %v", props)
	}
}
