package flint

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is Flint's release version; set at build time with
// -ldflags "-X github.com/flint-mesos/flint.Version=v1.2.3". Unset, the
// version comes from the build information: the module version `go install
// …@version` records, or the one Go derives from the VCS when building in a
// clone.
var Version = "dev"

// VersionString describes this build: version, VCS revision (with
// "+modified" for a dirty tree) and Go version. Go records the revision
// when it builds inside a git clone with VCS stamping on (-buildvcs=auto,
// the default; -buildvcs=false or a git worktree, whose .git is a file,
// leave it out: the revision then reads "unknown").
func VersionString() string {
	bi, _ := debug.ReadBuildInfo()
	return versionString(Version, bi)
}

func versionString(version string, bi *debug.BuildInfo) string {
	rev, modified := "unknown", false
	if bi != nil {
		if version == "dev" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		rev += "+modified"
	}
	return fmt.Sprintf("flint %s (revision %s, %s %s/%s)", version, rev, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}
