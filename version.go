package flint

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is Flint's release version; set at build time with
// -ldflags "-X github.com/flint-mesos/flint.Version=v1.2.3".
var Version = "dev"

// VersionString describes this build: version, VCS revision and Go version.
func VersionString() string {
	rev := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				rev = s.Value
			}
		}
	}
	return fmt.Sprintf("flint %s (revision %s, %s %s/%s)", Version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
