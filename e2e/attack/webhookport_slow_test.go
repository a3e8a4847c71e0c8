package attack

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// webhookPortSlow is one way of holding a connection open, with the
// server's bound on it.
type webhookPortSlow struct {
	name  string
	bound time.Duration
	// open connects and does what the client does before it goes slow.
	open func(t *testing.T, addr string) (net.Conn, error)
	// trickle is sent a byte at a time, every half second; nil: nothing.
	trickle string
}

func webhookPortDialTLS(t *testing.T, addr string) (net.Conn, error) {
	t.Helper()
	d := tls.Dialer{NetDialer: &net.Dialer{Timeout: 10 * time.Second}, Config: &tls.Config{InsecureSkipVerify: true}} //nolint:gosec // the attacker does not care whom it talks to
	return d.DialContext(t.Context(), "tcp", addr)
}

// TestAttackerHoldsWebhookConnectionsOpen: slow clients (slowloris) open
// 200 connections and hold them: without a TLS handshake, sending headers
// a byte at a time, sending a declared body a byte at a time, idling after
// a request. The server drops each within its timeout and still answers.
func TestAttackerHoldsWebhookConnectionsOpen(t *testing.T) {
	t.Parallel()
	s := webhookPortStart(t)
	const slack = 5 * time.Second
	ways := []webhookPortSlow{
		{name: "no TLS handshake", bound: 5 * time.Second, open: func(t *testing.T, addr string) (net.Conn, error) {
			t.Helper()
			d := net.Dialer{Timeout: 10 * time.Second}
			return d.DialContext(t.Context(), "tcp", addr)
		}},
		{name: "slow headers", bound: 5 * time.Second, open: webhookPortDialTLS,
			trickle: "POST /mutate/" + s.name + " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nX-Pad: " + strings.Repeat("a", 200)},
		{name: "slow body", bound: 10 * time.Second, open: func(t *testing.T, addr string) (net.Conn, error) {
			t.Helper()
			conn, err := webhookPortDialTLS(t, addr)
			if err == nil {
				_, err = fmt.Fprintf(conn, "POST /mutate/%s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{", s.name)
			}
			return conn, err
		}, trickle: strings.Repeat(" ", 200)},
		{name: "idle after a request", bound: 30 * time.Second, open: func(t *testing.T, addr string) (net.Conn, error) {
			t.Helper()
			conn, err := webhookPortDialTLS(t, addr)
			if err != nil {
				return nil, err
			}
			if _, err := io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
				return conn, err
			}
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err == nil {
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
			}
			return conn, err
		}},
	}
	const perWay = 50
	type held struct {
		way  string
		took time.Duration // until the server closed it; 0: not closed
		err  error
	}
	results := make(chan held, perWay*len(ways))
	var wg sync.WaitGroup
	for _, way := range ways {
		for range perWay {
			wg.Go(func() {
				conn, err := way.open(t, s.addr)
				if err != nil {
					results <- held{way: way.name, err: err}
					if conn != nil {
						_ = conn.Close()
					}
					return
				}
				defer conn.Close()
				results <- held{way: way.name, took: webhookPortHold(conn, way.trickle, way.bound+slack)}
			})
		}
	}
	wg.Wait()
	close(results)
	worst := map[string]time.Duration{}
	for r := range results {
		var bound time.Duration
		for _, w := range ways {
			if w.name == r.way {
				bound = w.bound
			}
		}
		switch {
		case r.err != nil:
			t.Errorf("%s: open: %v", r.way, r.err)
		case r.took == 0:
			t.Errorf("%s: still open after %s, the server's bound being %s", r.way, bound+slack, bound)
		default:
			worst[r.way] = max(worst[r.way], r.took)
		}
	}
	t.Logf("longest held until the server closed: %v", worst)
	s.waitGuarding()
}

// webhookPortHold keeps conn open, sending trickle a byte every half
// second, until the server closes it or limit passes; it returns how long
// the server took to close it, 0 when it did not.
func webhookPortHold(conn net.Conn, trickle string, limit time.Duration) time.Duration {
	start := time.Now()
	closed := make(chan struct{})
	go func() {
		defer close(closed)
		_ = conn.SetReadDeadline(start.Add(limit))
		_, _ = io.Copy(io.Discard, conn) // returns at EOF, a reset or the deadline
	}()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for i := 0; ; {
		select {
		case <-closed:
			if took := time.Since(start); took < limit {
				return took
			}
			return 0
		case <-tick.C:
			if i < len(trickle) {
				_ = conn.SetWriteDeadline(time.Now().Add(time.Second))
				if _, err := io.WriteString(conn, trickle[i:i+1]); err == nil {
					i++
				}
			}
		}
	}
}
