// Package dockerjob holds the tests of real Flint jobs, coarse and fine,
// whose executors run in Docker containers on a minimesos cluster whose
// agents use the Docker containerizer (agent.Config.Containerizers
// "docker"): the image is built locally FROM scratch around a static
// flint binary, as the e2e suite builds its own. It has no code of its
// own.
package dockerjob
