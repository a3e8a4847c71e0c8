package server

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
)

// waitTimeout bounds every wait for the server to do something.
const waitTimeout = 10 * time.Second

// socketDir returns a short temporary directory: unix socket paths are
// limited to about 100 bytes, and t.TempDir() names can be longer.
func socketDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "srv")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	return dir
}

// start runs f in a goroutine and returns its result channel and a cancel
// that stops it; the test fails if it does not stop within waitTimeout.
func start(t *testing.T, f func(ctx context.Context) error) (<-chan error, context.CancelFunc) {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		done <- f(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-finished:
		case <-time.After(waitTimeout):
			t.Errorf("server did not stop within %s", waitTimeout)
		}
	})
	return done, cancel
}

// waitModules polls c until it answers or waitTimeout passes.
func waitModules(t *testing.T, c *Client) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		_, err := c.Modules(t.Context())
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("server did not answer within %s: %v", waitTimeout, err)
		}
		<-tick.C
	}
}

func TestServeAndShutdown(t *testing.T) {
	var lc net.ListenConfig
	tcp, err := lc.Listen(t.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(socketDir(t), "debug.socket")
	socket, err := listenSocket(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(newFakeSource())
	done, cancel := start(t, func(ctx context.Context) error { return srv.Serve(ctx, tcp, socket) })

	overHTTP, err := NewHTTPClient(tcp.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewSocketClient(path).Modules(t.Context())
	if err != nil {
		t.Fatalf("socket: %v", err)
	}
	if diff := cmp.Diff(newFakeSource().modules, got); diff != "" {
		t.Errorf("socket: modules (-want +got):\n%s", diff)
	}
	// The TCP listener does not serve the debug API by default.
	_, err = overHTTP.ModuleValues(t.Context(), "ingress")
	if se := (*StatusError)(nil); !errors.As(err, &se) || se.Code != http.StatusNotFound {
		t.Errorf("module values over TCP by default: %v, want HTTP 404", err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if mode := fi.Mode().Perm(); mode != 0o600 {
		t.Errorf("socket mode %o, want 600", mode)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve after cancel: %v, want nil", err)
		}
	case <-time.After(ShutdownTimeout + waitTimeout):
		t.Fatal("Serve did not return after cancel")
	}
	if _, err := os.Stat(path); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("socket left behind after shutdown: %v", err)
	}
}

func TestRunReplacesStaleSocket(t *testing.T) {
	path := filepath.Join(socketDir(t), "debug.socket")
	// A socket file whose listener is gone, as a killed operator leaves it.
	var lc net.ListenConfig
	stale, err := lc.Listen(t.Context(), "unix", path)
	if err != nil {
		t.Fatal(err)
	}
	stale.(*net.UnixListener).SetUnlinkOnClose(false)
	_ = stale.Close()

	opts := Options{ListenAddress: "127.0.0.1:0", DebugSocket: path}
	done, _ := start(t, New(opts, newFakeSource(), discard()).Run)
	waitModules(t, NewSocketClient(path))
	select {
	case err := <-done:
		t.Fatalf("Run returned early: %v", err)
	default:
	}
}

func TestRunErrors(t *testing.T) {
	dir := socketDir(t)
	notSocket := filepath.Join(dir, "file")
	if err := os.WriteFile(notSocket, []byte("keep me"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"a regular file at the socket path", Options{ListenAddress: "127.0.0.1:0", DebugSocket: notSocket}, "exists and is not a socket"},
		{"a bad listen address", Options{ListenAddress: "127.0.0.1:http"}, `--listen-address "127.0.0.1:http"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := New(tt.opts, newFakeSource(), discard()).Run(t.Context())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Run: %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if data, err := os.ReadFile(notSocket); err != nil || string(data) != "keep me" {
		t.Errorf("the regular file was touched: %q, %v", data, err)
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    string // the address listened on
		wantErr bool
	}{
		{name: "default", want: "0.0.0.0:9650"},
		{name: "host and port", args: []string{"--listen-address=127.0.0.1:8080"}, want: "127.0.0.1:8080"},
		{name: "a bare host gets the default port", args: []string{"--listen-address=10.0.0.5"}, want: "10.0.0.5:9650"},
		{name: "a bare IPv6 host", args: []string{"--listen-address=::1"}, want: "[::1]:9650"},
		{name: "a named port", args: []string{"--listen-address=:http"}, wantErr: true},
		{name: "a port out of range", args: []string{"--listen-address=:99999"}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := DefaultOptions()
			flags := pflag.NewFlagSet("test", pflag.ContinueOnError)
			o.BindFlags(flags)
			if err := flags.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			err := o.Validate()
			if (err != nil) != tt.wantErr {
				t.Fatalf("Validate: %v, want error %t", err, tt.wantErr)
			}
			if !tt.wantErr && o.listenAddress() != tt.want {
				t.Errorf("listen address %q, want %q", o.listenAddress(), tt.want)
			}
		})
	}
}

func TestDebugSocketFlag(t *testing.T) {
	o := DefaultOptions()
	flags := pflag.NewFlagSet("test", pflag.ContinueOnError)
	o.BindFlags(flags)
	if o.DebugSocket != DefaultDebugSocket {
		t.Errorf("default socket %q, want %q", o.DebugSocket, DefaultDebugSocket)
	}
	if err := flags.Parse([]string{"--debug-socket="}); err != nil {
		t.Fatal(err)
	}
	if o.DebugSocket != "" {
		t.Errorf("--debug-socket= left %q, want it disabled", o.DebugSocket)
	}
}
