package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strconv"
	"time"
)

// cpuProfileSlice is the length of each CPU profile taken through the
// operator's debug socket; the profiles of a converge are consecutive
// slices, which go tool pprof merges when given them all.
const cpuProfileSlice = 5 * time.Second

// cpuProfiler takes consecutive CPU profiles of an operator through its
// debug socket (/debug/pprof/profile) into files prefix-NN.pprof, from
// its start until stop.
type cpuProfiler struct {
	stopping chan struct{}
	done     chan struct{}
	files    []string
	err      error
}

// startCPUProfile starts profiling the operator whose debug socket is
// socket; the first slice starts as soon as the socket answers.
func startCPUProfile(ctx context.Context, socket, prefix string) *cpuProfiler {
	p := &cpuProfiler{stopping: make(chan struct{}), done: make(chan struct{})}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", socket)
	}}}
	go func() {
		defer close(p.done)
		for i := 0; ; i++ {
			select {
			case <-p.stopping:
				return
			default:
			}
			path := fmt.Sprintf("%s-%02d.pprof", prefix, i)
			if err := profileSlice(ctx, client, path); err != nil {
				p.err = err
				return
			}
			p.files = append(p.files, path)
		}
	}()
	return p
}

// profileSlice writes one cpuProfileSlice profile to path, retrying the
// connection until the socket exists.
func profileSlice(ctx context.Context, client *http.Client, path string) error {
	url := "http://operator/debug/pprof/profile?seconds=" + strconv.Itoa(int(cpuProfileSlice/time.Second))
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, http.NoBody)
		if err != nil {
			return err
		}
		resp, err := client.Do(req)
		if err != nil {
			var op *net.OpError
			if errors.As(err, &op) && op.Op == "dial" {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(20 * time.Millisecond):
					continue
				}
			}
			return fmt.Errorf("CPU profile: %w", err)
		}
		return saveProfile(resp, path)
	}
}

// saveProfile writes resp's body to path and closes it.
func saveProfile(resp *http.Response, path string) error {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("CPU profile: %s", resp.Status)
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		_ = f.Close()
		return fmt.Errorf("CPU profile: %w", err)
	}
	return f.Close()
}

// stop ends the profiling after the slice in progress and returns the
// files written.
func (p *cpuProfiler) stop() ([]string, error) {
	close(p.stopping)
	<-p.done
	return p.files, p.err
}
