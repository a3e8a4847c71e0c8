package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/addon-operator/addon-operator/pkg/status"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// ErrUnreachable is returned by Client calls when nothing answers at the
// client's address: the operator is not running there, or the socket or
// address is wrong.
var ErrUnreachable = errors.New("operator not reachable")

// StatusError is a debug API answer other than 200 OK.
type StatusError struct {
	// Code is the HTTP status: 404 for an unknown module or route.
	Code int
	// Message is the server's error message.
	Message string
}

func (e *StatusError) Error() string {
	return fmt.Sprintf("%s (HTTP %d)", e.Message, e.Code)
}

// clientTimeout bounds one debug API call, a chart render included.
const clientTimeout = 2 * time.Minute

// maxResponse bounds what a client reads from one answer.
const maxResponse = 64 << 20

// Client calls a running operator's debug API. Create it with
// NewSocketClient or NewHTTPClient.
type Client struct {
	http  *http.Client
	base  string // URL the routes are appended to
	where string // the address, for errors
	token string // bearer token sent with every request, if any
}

// WithToken returns a copy of c that sends token as its bearer token, as
// an HTTP listener with --debug-http requires.
func (c *Client) WithToken(token string) *Client {
	cp := *c
	cp.token = token
	return &cp
}

// NewSocketClient returns a client for the debug socket at path.
func NewSocketClient(path string) *Client {
	var d net.Dialer
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", path)
		},
	}
	return &Client{
		http:  &http.Client{Transport: tr, Timeout: clientTimeout},
		base:  "http://addon-operator",
		where: "unix socket " + path,
	}
}

// NewHTTPClient returns a client for the operator's HTTP listener at
// address: a URL such as http://10.0.0.5:9650, or a bare host:port.
func NewHTTPClient(address string) (*Client, error) {
	if !strings.Contains(address, "://") {
		address = "http://" + address
	}
	u, err := url.Parse(address)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("address %q: want a URL like http://host:%s", address, DefaultPort)
	}
	base := strings.TrimSuffix(u.String(), "/")
	return &Client{http: &http.Client{Timeout: clientTimeout}, base: base, where: base}, nil
}

// Queues returns every queue with its tasks.
func (c *Client) Queues(ctx context.Context) ([]status.QueueStatus, error) {
	return getJSON[[]status.QueueStatus](ctx, c, "/debug/queues")
}

// Modules returns every module's status.
func (c *Client) Modules(ctx context.Context) ([]status.ModuleStatus, error) {
	return getJSON[[]status.ModuleStatus](ctx, c, "/debug/modules")
}

// ModuleValues returns a module's effective values, {global, <moduleKey>}.
func (c *Client) ModuleValues(ctx context.Context, name string) (values.Values, error) {
	return getJSON[values.Values](ctx, c, "/debug/modules/"+url.PathEscape(name)+"/values")
}

// ModuleConfig returns a module's section of the ConfigMap.
func (c *Client) ModuleConfig(ctx context.Context, name string) (values.Values, error) {
	return getJSON[values.Values](ctx, c, "/debug/modules/"+url.PathEscape(name)+"/config")
}

// GlobalValues returns the effective global values.
func (c *Client) GlobalValues(ctx context.Context) (values.Values, error) {
	return getJSON[values.Values](ctx, c, "/debug/global/values")
}

// Warnings returns what the operator's /readyz names besides "ok": an
// unreachable API server, a deleted or rejected ConfigMap, foreign
// releases; one line each.
func (c *Client) Warnings(ctx context.Context) ([]string, error) {
	return getJSON[[]string](ctx, c, "/debug/warnings")
}

// GlobalConfig returns the global section of the ConfigMap.
func (c *Client) GlobalConfig(ctx context.Context) (values.Values, error) {
	return getJSON[values.Values](ctx, c, "/debug/global/config")
}

// Render renders a module's chart with its current values.
func (c *Client) Render(ctx context.Context, name string) (*Rendered, error) {
	var out Rendered
	if err := c.get(ctx, "/debug/modules/"+url.PathEscape(name)+"/render", &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// getJSON returns the JSON answer of route decoded into a T.
func getJSON[T any](ctx context.Context, c *Client, route string) (T, error) {
	var out T
	err := c.get(ctx, route, &out)
	return out, err
}

// Profile returns the Go profile name (heap, goroutine, allocs, profile
// for CPU, trace...) of the operator, as go tool pprof reads it; seconds,
// when above 0, is how long CPU profiles and traces record. Only the debug
// socket serves profiles.
func (c *Client) Profile(ctx context.Context, name string, seconds int) ([]byte, error) {
	route := "/debug/pprof/" + url.PathEscape(name)
	if seconds > 0 {
		route += "?seconds=" + strconv.Itoa(seconds)
	}
	return c.fetch(ctx, route)
}

// get decodes the JSON answer of route into out (see fetch).
func (c *Client) get(ctx context.Context, route string, out any) error {
	body, err := c.fetch(ctx, route)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode %s: %w", route, err)
	}
	return nil
}

// fetch returns the body of route's answer. Failing to connect is
// ErrUnreachable; an answer other than 200 is a *StatusError.
func (c *Client) fetch(ctx context.Context, route string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+route, http.NoBody)
	if err != nil {
		return nil, fmt.Errorf("request %s: %w", route, err)
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		var op *net.OpError
		if errors.As(err, &op) && op.Op == "dial" {
			return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, c.where, op.Err)
		}
		return nil, fmt.Errorf("get %s from %s: %w", route, c.where, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", route, err)
	}
	if resp.StatusCode != http.StatusOK {
		var e apiError
		if json.Unmarshal(body, &e) != nil || e.Error == "" {
			e.Error = strings.TrimSpace(string(body))
		}
		return nil, &StatusError{Code: resp.StatusCode, Message: e.Error}
	}
	return body, nil
}
