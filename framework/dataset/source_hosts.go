package dataset

import (
	"net"
	"net/url"
	"os"
	"strings"
)

// splitHosts is where the bytes of input path are, as far as the driver
// can tell: an http(s) URL's host (a loopback one is the driver's host);
// a local path on a local-disk file system is on the driver's host (a
// path on a network file system — NFS, SMB, FUSE, Ceph, Lustre, … — is
// everywhere, so no host). A host with no executor costs nothing: the
// scheduler's node-local level is valid only while an executor runs on
// a preferred host.
func splitHosts(path string) []string {
	if strings.HasPrefix(path, "http://") || strings.HasPrefix(path, "https://") {
		u, err := url.Parse(path)
		if err != nil || u.Hostname() == "" {
			return nil
		}
		h := u.Hostname()
		if !isLoopback(h) {
			return []string{h}
		}
		return driverHost()
	}
	if onLocalDisk(path) {
		return driverHost()
	}
	return nil
}

func isLoopback(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func driverHost() []string {
	if h, err := os.Hostname(); err == nil && h != "" {
		return []string{h}
	}
	return nil
}
