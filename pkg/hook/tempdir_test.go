package hook

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDefaultTempDirIsMemoryWhenItSaysSo(t *testing.T) {
	dir, memory := DefaultTempDir()
	if filepath.Base(dir) != "addon-operator" {
		t.Errorf("DefaultTempDir() = %q, want a directory named addon-operator", dir)
	}
	if memory != IsMemory(dir) {
		t.Errorf("DefaultTempDir() = %q, memory %v; IsMemory says %v", dir, memory, !memory)
	}
	if !memory && filepath.Dir(dir) != os.TempDir() {
		t.Errorf("DefaultTempDir() = %q on disk, want it in %s", dir, os.TempDir())
	}
}

func TestIsMemory(t *testing.T) {
	if _, err := os.Stat("/proc/self"); err == nil && IsMemory("/proc/self/does/not/exist") {
		t.Error("IsMemory(/proc/...) = true: procfs is not tmpfs")
	}
	if isTmpfs("/dev/shm") && !IsMemory("/dev/shm/addon-operator-test-missing/x") {
		t.Error("IsMemory of a missing path under /dev/shm (tmpfs here) = false")
	}
	if got, want := IsMemory(t.TempDir()), isTmpfs(os.TempDir()); got != want {
		t.Errorf("IsMemory(t.TempDir()) = %v, isTmpfs(%s) = %v", got, os.TempDir(), want)
	}
}
