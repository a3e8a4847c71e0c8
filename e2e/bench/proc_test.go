package bench

import (
	"os"
	"testing"
)

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name    string
		stat    string
		want    cpuTimes
		wantErr bool
	}{
		{"plain", "42 (addon-operator) S 1 42 42 0 -1 4194560 100 0 0 0 250 37 5 6 20 0 9 0 100 0 0", cpuTimes{287, 11}, false},
		{"name with spaces and parens", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 1 0", cpuTimes{7, 1}, false},
		{"truncated", "7 (sh) S 1 2 3 0 -1 0 0 0 0 0 3 4 1", cpuTimes{}, true},
		{"no name", "garbage", cpuTimes{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatCPU([]byte(tt.stat))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseStatCPU = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseStatusKB(t *testing.T) {
	status := "Name:\taddon-operator\nVmPeak:\t 1300000 kB\nVmHWM:\t   51234 kB\nVmRSS:\t   40000 kB\n"
	got, err := parseStatusKB([]byte(status), "VmHWM")
	if err != nil || got != 51234<<10 {
		t.Errorf("VmHWM = %d, %v; want %d", got, err, 51234<<10)
	}
	if _, err := parseStatusKB([]byte(status), "VmSwap"); err == nil {
		t.Error("missing key: no error")
	}
}

// The live readers work on the test process itself.
func TestProcSelf(t *testing.T) {
	if _, err := cpuTicks(os.Getpid()); err != nil {
		t.Error(err)
	}
	rss, err := peakRSS(os.Getpid())
	if err != nil || rss <= 0 {
		t.Errorf("peakRSS = %d, %v", rss, err)
	}
}
