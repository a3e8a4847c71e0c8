package bench

import (
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// statusOf is a /proc/PID/status of the operator with the given RssAnon
// and RssFile in kB.
func statusOf(anonKB, fileKB string) string {
	return "Name:\taddon-operator\nState:\tS (sleeping)\nVmPeak:\t 1912340 kB\nVmSize:\t 1912340 kB\n" +
		"VmHWM:\t   88120 kB\nVmRSS:\t   71004 kB\nRssAnon:\t   " + anonKB + " kB\nRssFile:\t   " + fileKB + " kB\n" +
		"RssShmem:\t       0 kB\nVmData:\t  151236 kB\nVmExe:\t   42112 kB\nThreads:\t12\n"
}

func TestParseStatusMem(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    memSample
		wantErr bool
	}{
		{"operator", statusOf("20480", "50616"), memSample{Anon: 20480 << 10, File: 50616 << 10}, false},
		{"kernel thread without Rss lines", "Name:\tkthreadd\nState:\tS (sleeping)\nThreads:\t1\n", memSample{}, true},
		{"no unit", "RssAnon:\t20480\nRssFile:\t50616 kB\n", memSample{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseStatusMem([]byte(tt.status))
			if (err != nil) != tt.wantErr || got != tt.want {
				t.Errorf("parseStatusMem = %+v, %v; want %+v, error %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestMemPeakAdd(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name    string
		samples []memSample
		want    MemPeak
	}{
		{"none", nil, MemPeak{}},
		{"one", []memSample{{Anon: 3 * mb, File: 9 * mb}}, MemPeak{Anon: 3 * mb, File: 9 * mb, Samples: 1}},
		{
			// Start-up maps the binary first; anonymous memory peaks during the
			// converge, when the file pages are already fewer than at their own peak.
			"file pages at the anonymous peak, not their own peak",
			[]memSample{{Anon: 2 * mb, File: 12 * mb}, {Anon: 30 * mb, File: 52 * mb}, {Anon: 38 * mb, File: 50 * mb}, {Anon: 25 * mb, File: 55 * mb}},
			MemPeak{Anon: 38 * mb, File: 50 * mb, Samples: 4},
		},
		{"tie keeps the earlier sample", []memSample{{Anon: 5 * mb, File: 40 * mb}, {Anon: 5 * mb, File: 60 * mb}}, MemPeak{Anon: 5 * mb, File: 40 * mb, Samples: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var p MemPeak
			for _, s := range tt.samples {
				p.add(s)
			}
			if diff := cmp.Diff(tt.want, p); diff != "" {
				t.Errorf("peak (-want +got):\n%s", diff)
			}
		})
	}
}

// The sampler reads the test process itself; its first sample is taken
// at once, so a Stop right after the start still has one.
func TestMemSamplerSelf(t *testing.T) {
	m := startMemSampler(t.Context(), os.Getpid(), memInterval)
	p := m.Stop()
	if p.Samples < 1 || p.Anon <= 0 || p.File <= 0 {
		t.Errorf("peak %+v, want a sample with anonymous and file pages", p)
	}
	if again := m.Stop(); again != p {
		t.Errorf("second Stop = %+v, want %+v", again, p)
	}
}

// A process that is gone ends the sampling without samples.
func TestMemSamplerNoProcess(t *testing.T) {
	m := startMemSampler(t.Context(), -1, memInterval)
	if p := m.Stop(); p != (MemPeak{}) {
		t.Errorf("peak %+v, want none", p)
	}
}
