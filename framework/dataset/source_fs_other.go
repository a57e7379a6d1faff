//go:build !linux

package dataset

// onLocalDisk is false where the file system's kind is not checked: no
// host preference.
func onLocalDisk(string) bool { return false }
