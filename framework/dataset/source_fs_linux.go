package dataset

import "syscall"

// networkFS are statfs magic numbers of file systems whose files are not
// on one host's disk (linux/magic.h and the file systems' sources).
var networkFS = map[int64]bool{
	0x6969:     true, // NFS
	0x517b:     true, // SMB
	0xff534d42: true, // CIFS
	0xfe534d42: true, // SMB2
	0x65735546: true, // FUSE (sshfs, s3fs, …)
	0x00c36400: true, // Ceph
	0x01021997: true, // 9P
	0x0bd00bd0: true, // Lustre
	0x01161970: true, // GFS2
	0x5346414f: true, // AFS
	0x7461636f: true, // OCFS2
	0x47504653: true, // GPFS
	0x73757245: true, // Coda
}

// onLocalDisk reports whether path is on a file system of this host's own
// (not a network or cluster file system).
func onLocalDisk(path string) bool {
	var st syscall.Statfs_t
	if err := syscall.Statfs(path, &st); err != nil {
		return false
	}
	return !networkFS[int64(st.Type)]
}
