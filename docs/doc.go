// Package docs holds Flint's documentation (the Markdown files beside this
// one) and the test that keeps docs/architecture.md in step with the code:
// every package path it names exists, and every package-qualified name it
// writes (shuffleconf.DriverSettings) is declared in a package of that name.
package docs
