package config_test

import (
	"fmt"

	"github.com/flint-mesos/flint/framework/config"
)

func ExampleLoad() {
	c, err := config.Load(config.LoadOptions{
		Environ: []string{"FLINT_EXECUTOR_MEMORY=2048", "FLINT_EXECUTORENV_JAVA_HOME=/opt/jdk"},
		Conf:    []string{"flint.master=local[4]", "flint.locality.wait=500ms", "flint.myteam.owner=alice"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(c.String("flint.master"), c.Size("flint.executor.memory")>>20, "MiB", c.Duration("flint.locality.wait.node"))
	fmt.Println(c.Prefixed("flint.executorEnv."))
	fmt.Println(c.Warnings())
	// Output:
	// local[4] 2048 MiB 500ms
	// map[JAVA_HOME:/opt/jdk]
	// [config: ignoring unknown key flint.myteam.owner from --conf flint.myteam.owner]
}
