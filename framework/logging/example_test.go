package logging_test

import (
	"os"

	"github.com/sirupsen/logrus"

	"github.com/flint-mesos/flint/framework/logging"
)

func ExampleNew() {
	log, err := logging.New(logging.Options{Level: "info", Format: "json", Out: os.Stdout, Secrets: []string{"s3cr3t"}})
	if err != nil {
		panic(err)
	}
	log.SetFormatter(&logrus.JSONFormatter{DisableTimestamp: true})
	log.WithField("secret", "s3cr3t").Info("subscribed")
	// Output:
	// {"level":"info","msg":"subscribed","secret":"*****"}
}
