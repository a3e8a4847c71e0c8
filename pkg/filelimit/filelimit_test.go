package filelimit

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, n int) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(strings.Repeat("a", n)), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	tests := []struct {
		name    string
		size    int
		limit   int64
		wantErr string
	}{
		{name: "empty", size: 0, limit: 10},
		{name: "under", size: 9, limit: 10},
		{name: "at the limit", size: 10, limit: 10},
		{name: "over", size: 11, limit: 10, wantErr: ": 11 bytes, over the limit of 10"},
		{name: "far over", size: 5 << 20, limit: Default, wantErr: ": 5242880 bytes, over the limit of 4194304"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := write(strings.ReplaceAll(tt.name, " ", "-")+".yaml", tt.size)
			data, err := ReadFile(p, tt.limit)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("ReadFile: %v", err)
				}
				if len(data) != tt.size {
					t.Errorf("read %d bytes, want %d", len(data), tt.size)
				}
				return
			}
			var tl *TooLargeError
			if !errors.As(err, &tl) {
				t.Fatalf("ReadFile: %v, want a *TooLargeError", err)
			}
			if diff := cmp.Diff(p+tt.wantErr, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadFileNotRegular(t *testing.T) {
	// /dev/zero has no size and never ends: only the limit stops the read.
	_, err := ReadFile("/dev/zero", 100)
	if diff := cmp.Diff("/dev/zero: more than 100 bytes, over the limit of 100", errString(err)); diff != "" {
		t.Errorf("error (-want +got):\n%s", diff)
	}
}

func TestReadFileMissing(t *testing.T) {
	p := filepath.Join(t.TempDir(), "absent.yaml")
	_, err := ReadFile(p, 10)
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(errString(err), p) {
		t.Errorf("ReadFile of a missing file: %v, want fs.ErrNotExist naming the file", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
