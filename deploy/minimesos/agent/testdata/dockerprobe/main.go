// Command dockerprobe is the program of the agent's Docker containerizer
// tests, built statically into an image FROM scratch: with
// testexecutor.Env=1 it is minimesostest/testexecutor (a custom
// executor); otherwise "exit N" writes its environment to
// $MESOS_SANDBOX/probe, says hello on stdout and exits N, and "sleep"
// blocks until it is killed.
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/flint-mesos/flint/deploy/minimesos/minimesostest/testexecutor"
)

func main() {
	testexecutor.RunIfChild()
	if len(os.Args) == 2 && os.Args[1] == "sleep" {
		time.Sleep(time.Hour) // killed long before
		os.Exit(103)
	}
	if len(os.Args) != 3 || os.Args[1] != "exit" {
		fmt.Fprintln(os.Stderr, "usage: dockerprobe exit N | sleep")
		os.Exit(100)
	}
	code, err := strconv.Atoi(os.Args[2])
	if err != nil {
		os.Exit(101)
	}
	env := strings.Join(os.Environ(), "\n")
	if err := os.WriteFile(os.Getenv("MESOS_SANDBOX")+"/probe", []byte(env), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(102)
	}
	fmt.Println("hello from the container")
	os.Exit(code)
}
