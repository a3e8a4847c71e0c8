package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// errNoAuth is Serve's error when a protected route is switched on without
// an Auth to check requests with.
var errNoAuth = errors.New("--debug-http, --metrics-auth and --status-page=auth need an authenticator (Options.Auth)")

// User is who a bearer token belongs to, as a TokenReview tells.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

// Auth checks requests to protected routes; KubeAuth asks the API server.
// Its methods are called from request goroutines.
type Auth interface {
	// Authenticate returns the user token belongs to; ok is false when
	// the token is not valid, err set when it could not be checked.
	Authenticate(ctx context.Context, token string) (u User, ok bool, err error)
	// Authorize reports whether u may get path; reason may say why not.
	// err is set when it could not be decided.
	Authorize(ctx context.Context, u User, path string) (allowed bool, reason string, err error)
}

// guard checks the requests of every protected route of one server, so
// that an outage of the reviews is logged once, not once a request.
type guard struct {
	auth    Auth
	log     *slog.Logger
	failing atomic.Bool // the last review ended in an error
}

// wrap passes a request on to next only when its bearer token is valid
// (else 401) and its user may get the path (else 403 with the reason).
// When a review fails, the request gets 503 and the failure is logged
// once, until the reviews answer again.
func (g *guard) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if g.allow(w, r) {
			next.ServeHTTP(w, r)
		}
	})
}

// allow answers r with 401, 403 or 503 and returns false, or returns true
// and writes nothing.
func (g *guard) allow(w http.ResponseWriter, r *http.Request) bool {
	if g.auth == nil {
		writeText(w, http.StatusServiceUnavailable, errNoAuth.Error())
		return false
	}
	token, ok := bearerToken(r)
	if !ok {
		unauthorized(w, "Unauthorized: send a Kubernetes bearer token (Authorization: Bearer ...)")
		return false
	}
	u, ok, err := g.auth.Authenticate(r.Context(), token)
	if g.reviewFailed(w, r, err) {
		return false
	}
	if !ok {
		unauthorized(w, "Unauthorized: the bearer token is not valid")
		return false
	}
	allowed, reason, err := g.auth.Authorize(r.Context(), u, r.URL.Path)
	if g.reviewFailed(w, r, err) {
		return false
	}
	if !allowed {
		msg := fmt.Sprintf("Forbidden: user %q may not get %s", u.Name, r.URL.Path)
		if reason != "" {
			msg += ": " + reason
		}
		writeText(w, http.StatusForbidden, msg)
		return false
	}
	return true
}

// reviewFailed answers 503 and returns true when err is set, logging the
// first failure of an outage and, on the next success, its end.
func (g *guard) reviewFailed(w http.ResponseWriter, r *http.Request, err error) bool {
	if err == nil {
		if g.failing.CompareAndSwap(true, false) {
			g.log.Info("http auth reviews answer again")
		}
		return false
	}
	if g.failing.CompareAndSwap(false, true) {
		g.log.Warn("http auth reviews failing, protected routes answer 503", slog.String(logkey.Name, r.URL.Path), logkey.Err(err))
	}
	writeText(w, http.StatusServiceUnavailable, "Service Unavailable: the token or its rights could not be checked with the API server")
	return true
}

// bearerToken returns the token of an "Authorization: Bearer" header.
func bearerToken(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || token == "" {
		return "", false
	}
	return token, true
}

func unauthorized(w http.ResponseWriter, msg string) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="addon-operator"`)
	writeText(w, http.StatusUnauthorized, msg)
}
