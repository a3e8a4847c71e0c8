package operatortest

import (
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

// FreeAddress returns a loopback address whose port is free right now.
func FreeAddress(tb testing.TB) string {
	tb.Helper()
	var lc net.ListenConfig
	ln, err := lc.Listen(tb.Context(), "tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := ln.Close(); err != nil {
		tb.Fatal(err)
	}
	return addr
}

// SocketPath returns a path for a unix socket in a new directory that is
// removed at cleanup. The directory is not t.TempDir(): socket paths are
// limited to about 100 bytes, and test names can be long.
func SocketPath(tb testing.TB) string {
	tb.Helper()
	dir, err := os.MkdirTemp("", "e2esock")
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = os.RemoveAll(dir) })
	return filepath.Join(dir, "debug.socket")
}

// HTTPGet returns the status code and body of a GET of url; err is set
// when there is no answer.
func HTTPGet(tb testing.TB, url string) (code int, body string, err error) {
	tb.Helper()
	return httpGet(tb, http.DefaultClient, url)
}

func httpGet(tb testing.TB, client *http.Client, url string) (code int, body string, err error) {
	tb.Helper()
	req, err := http.NewRequestWithContext(tb.Context(), http.MethodGet, url, http.NoBody)
	if err != nil {
		return 0, "", err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, string(data), err
}
