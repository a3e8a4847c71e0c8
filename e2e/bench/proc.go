package bench

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// defaultClockTicks is USER_HZ on every common Linux build, used when
// getconf is missing.
const defaultClockTicks = 100

// clockTicks returns the unit of utime and stime in /proc/PID/stat.
func clockTicks(ctx context.Context) int64 {
	out, err := exec.CommandContext(ctx, "getconf", "CLK_TCK").Output()
	if err != nil {
		return defaultClockTicks
	}
	hz, err := strconv.ParseInt(strings.TrimSpace(string(out)), 10, 64)
	if err != nil || hz <= 0 {
		return defaultClockTicks
	}
	return hz
}

// cpuTicks returns utime+stime of pid, in clock ticks.
func cpuTicks(pid int) (int64, error) {
	t, err := readCPU(pid)
	return t.self, err
}

// cpuTimes is a process's CPU time in clock ticks: its own, and that of
// its children it has waited for (the hooks).
type cpuTimes struct{ self, children int64 }

func readCPU(pid int) (cpuTimes, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return cpuTimes{}, fmt.Errorf("read cpu time: %w", err)
	}
	return parseStatCPU(data)
}

// parseStatCPU reads fields 14 to 17 (utime, stime, cutime, cstime) of a
// /proc/PID/stat line. The command name (field 2) may hold spaces and
// parentheses, so fields are counted from the last ')'.
func parseStatCPU(stat []byte) (cpuTimes, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return cpuTimes{}, fmt.Errorf("parse /proc stat %q: no command name", stat)
	}
	fields := strings.Fields(string(stat[i+1:]))
	const first, last = 14 - 3, 17 - 3 // fields[0] is field 3, the state
	if len(fields) <= last {
		return cpuTimes{}, fmt.Errorf("parse /proc stat: %d fields after the command name", len(fields))
	}
	var n [4]int64
	for k := range n {
		v, err := strconv.ParseInt(fields[first+k], 10, 64)
		if err != nil {
			return cpuTimes{}, fmt.Errorf("parse /proc stat cpu field: %w", err)
		}
		n[k] = v
	}
	return cpuTimes{self: n[0] + n[1], children: n[2] + n[3]}, nil
}

// cpuDuration converts clock ticks to time.
func cpuDuration(ticks, hz int64) time.Duration {
	return time.Duration(ticks) * time.Second / time.Duration(hz)
}

// peakRSS returns VmHWM of pid in bytes.
func peakRSS(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("read memory status: %w", err)
	}
	return parseStatusKB(data, "VmHWM")
}

// memSample is one reading of a process's resident memory, in bytes:
// Anon is RssAnon (heap, stacks), File is RssFile (mapped files, mostly the
// binary's code and read-only data).
type memSample struct{ Anon, File int64 }

// readMem returns pid's resident memory now.
func readMem(pid int) (memSample, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memSample{}, fmt.Errorf("read memory status: %w", err)
	}
	return parseStatusMem(data)
}

// parseStatusMem reads RssAnon and RssFile of a /proc/PID/status.
func parseStatusMem(status []byte) (memSample, error) {
	anon, err := parseStatusKB(status, "RssAnon")
	if err != nil {
		return memSample{}, err
	}
	file, err := parseStatusKB(status, "RssFile")
	if err != nil {
		return memSample{}, err
	}
	return memSample{Anon: anon, File: file}, nil
}

// parseStatusKB returns a "Key:   123 kB" line of /proc/PID/status in bytes.
func parseStatusKB(status []byte, key string) (int64, error) {
	for line := range strings.Lines(string(status)) {
		rest, ok := strings.CutPrefix(line, key+":")
		if !ok {
			continue
		}
		fields := strings.Fields(rest)
		if len(fields) != 2 || fields[1] != "kB" {
			return 0, fmt.Errorf("parse /proc status %s: %q", key, line)
		}
		kb, err := strconv.ParseInt(fields[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse /proc status %s: %w", key, err)
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("parse /proc status: no %s", key)
}

// idleCPU waits settle, then returns the CPU pid used over window, in
// percent of one core.
func idleCPU(ctx context.Context, pid int, settle, window time.Duration) (float64, error) {
	hz := clockTicks(ctx)
	if err := pause(ctx, settle); err != nil {
		return 0, err
	}
	before, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	if err := pause(ctx, window); err != nil {
		return 0, err
	}
	after, err := cpuTicks(pid)
	if err != nil {
		return 0, err
	}
	return float64(after-before) / float64(hz) / time.Since(start).Seconds() * 100, nil
}

// pause lets d pass unless ctx ends first. It measures idleness; it does
// not synchronise with anything.
func pause(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// LoadAverage returns the machine's 1-minute load average, "" when unknown.
func LoadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	if f := strings.Fields(string(data)); len(f) > 0 {
		return f[0]
	}
	return ""
}
