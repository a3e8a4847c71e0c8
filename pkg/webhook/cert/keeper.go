// Package cert keeps the webhook server's serving certificate and the CA
// bundle the API server trusts: read from files, or issued by the operator
// into a Secret every replica shares, and renewed before it expires.
package cert

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// Keys of the certificate Secret.
const (
	secretCert = corev1.TLSCertKey
	secretKey  = corev1.TLSPrivateKeyKey
	secretCA   = "ca.crt"
)

// Options say where the certificate comes from and which names it serves.
type Options struct {
	// Namespace holds the Secret and the Service.
	Namespace string
	// ServiceName is the Service the API server calls, unless URL is set.
	ServiceName string
	// URL is the base URL the API server calls instead of the Service.
	URL string
	// ServerCert, ServerKey and CA are the user's files; when ServerCert
	// is empty the Keeper issues a certificate and keeps it in Secret.
	ServerCert, ServerKey, CA string
	// Secret names the Secret with the issued CA and certificate.
	Secret string
	// Validity is how long an issued certificate is valid; RenewBefore how
	// long before expiry it is renewed; CheckInterval how often the files
	// or the Secret are read again.
	Validity, RenewBefore, CheckInterval time.Duration
}

// Keeper keeps the serving certificate and the CA bundle in force: read
// from files, or issued by the operator and kept in a Secret that every
// replica shares. Its Run goroutine is the only writer; the TLS
// handshakes and the configuration writer read it.
type Keeper struct {
	opts   Options
	client kubernetes.Interface
	clock  clock.Clock
	log    *slog.Logger

	cert   atomic.Pointer[tls.Certificate]
	bundle atomic.Pointer[[]byte]
	// current is the PEM of the certificate in force, to tell changes.
	current []byte

	readyOnce sync.Once
	ready     chan struct{} // closed once a certificate is in force
	changed   chan struct{} // signalled when the CA bundle changed
}

// New returns a Keeper; nothing is read until Run (or Refresh).
func New(opts Options, client kubernetes.Interface, clk clock.Clock, log *slog.Logger) *Keeper {
	return &Keeper{opts: opts, client: client, clock: clk, log: log, ready: make(chan struct{}), changed: make(chan struct{}, 1)}
}

// GetCertificate serves tls.Config.GetCertificate: the certificate in
// force now, so a renewed one is used without a restart.
func (c *Keeper) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	if crt := c.cert.Load(); crt != nil {
		return crt, nil
	}
	return nil, errors.New("no webhook certificate yet")
}

// CABundle returns the PEM bundle the API server should trust.
func (c *Keeper) CABundle() []byte {
	if b := c.bundle.Load(); b != nil {
		return *b
	}
	return nil
}

// Run reads (and, when due, issues) the certificate at once and then every
// CertCheckInterval until ctx ends. Failures are logged and retried on
// the next check; the certificate in force stays.
func (c *Keeper) Run(ctx context.Context) error {
	for {
		if err := c.Refresh(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("webhook certificate not refreshed, will retry", logkey.Err(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.clock.After(c.opts.CheckInterval):
		}
	}
}

// Refresh reads the certificate once, and issues one when due.
func (c *Keeper) Refresh(ctx context.Context) error {
	if c.opts.ServerCert != "" {
		return c.loadFiles()
	}
	return c.loadSecret(ctx)
}

// loadFiles reads the user's certificate, key and CA bundle files.
func (c *Keeper) loadFiles() error {
	crt, err := os.ReadFile(c.opts.ServerCert)
	if err != nil {
		return fmt.Errorf("read webhook certificate: %w", err)
	}
	key, err := os.ReadFile(c.opts.ServerKey)
	if err != nil {
		return fmt.Errorf("read webhook key: %w", err)
	}
	var ca []byte
	if c.opts.CA != "" {
		if ca, err = os.ReadFile(c.opts.CA); err != nil {
			return fmt.Errorf("read webhook CA: %w", err)
		}
	}
	return c.use(crt, key, ca)
}

// loadSecret reads the Secret and issues a new certificate when there is
// none, when it expires within CertRenewBefore, or when it does not name
// the hosts the API server calls. Replicas racing to write it are ordered
// by the API server: the loser reads the winner's certificate.
func (c *Keeper) loadSecret(ctx context.Context) error {
	secrets := c.client.CoreV1().Secrets(c.opts.Namespace)
	for range 2 {
		s, err := secrets.Get(ctx, c.opts.Secret, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			s = nil
		case err != nil:
			return fmt.Errorf("get Secret %s: %w", c.opts.Secret, err)
		}
		if s != nil && !c.due(s.Data[secretCert]) {
			return c.use(s.Data[secretCert], s.Data[secretKey], s.Data[secretCA])
		}
		data, err := c.issue(secretData(s))
		if err != nil {
			return err
		}
		if s == nil {
			s = &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: c.opts.Secret, Namespace: c.opts.Namespace}, Type: corev1.SecretTypeTLS, Data: data}
			_, err = secrets.Create(ctx, s, metav1.CreateOptions{})
		} else {
			s = s.DeepCopy()
			s.Data = data
			_, err = secrets.Update(ctx, s, metav1.UpdateOptions{})
		}
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			continue // another replica wrote it first: read theirs
		}
		if err != nil {
			return fmt.Errorf("write Secret %s: %w", c.opts.Secret, err)
		}
		c.log.Info("webhook certificate issued", slog.String(logkey.Name, c.opts.Secret))
		return c.use(data[secretCert], data[secretKey], data[secretCA])
	}
	return fmt.Errorf("write Secret %s: changed by another replica twice in a row", c.opts.Secret)
}

func secretData(s *corev1.Secret) map[string][]byte {
	if s == nil {
		return nil
	}
	return s.Data
}

// due reports whether the certificate PEM must be replaced.
func (c *Keeper) due(pemCert []byte) bool {
	crts, err := certutil.ParseCertsPEM(pemCert)
	if err != nil || len(crts) == 0 {
		return true
	}
	leaf := crts[0]
	if leaf.NotAfter.Sub(c.clock.Now()) < c.opts.RenewBefore {
		return true
	}
	ips, dns := c.Hosts()
	for _, ip := range ips {
		if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
			return true
		}
	}
	for _, name := range dns {
		if !slices.Contains(leaf.DNSNames, name) {
			return true
		}
	}
	return false
}

// issue makes a new CA and serving certificate with client-go's helper.
// The CA bundle keeps the previous CA while it is valid, so that a
// replica still serving the previous certificate is trusted until it reads
// the new one.
func (c *Keeper) issue(old map[string][]byte) (map[string][]byte, error) {
	ips, dns := c.Hosts()
	host := "addon-operator-webhook"
	if len(dns) > 0 {
		host, dns = dns[0], dns[1:]
	} else if len(ips) > 0 {
		host, ips = ips[0].String(), ips[1:]
	}
	crtPEM, keyPEM, err := certutil.GenerateSelfSignedCertKeyWithOptions(certutil.SelfSignedCertKeyOptions{
		Host: host, AlternateIPs: ips, AlternateDNS: dns, MaxAge: c.opts.Validity,
	})
	if err != nil {
		return nil, fmt.Errorf("issue webhook certificate: %w", err)
	}
	chain, err := certutil.ParseCertsPEM(crtPEM)
	if err != nil || len(chain) != 2 {
		return nil, fmt.Errorf("issue webhook certificate: unexpected chain: %w", err)
	}
	cas := []*x509.Certificate{chain[1]}
	if prev, err := certutil.ParseCertsPEM(old[secretCA]); err == nil && len(prev) > 0 && prev[0].NotAfter.After(c.clock.Now()) {
		cas = append(cas, prev[0])
	}
	caPEM, err := certutil.EncodeCertificates(cas...)
	if err != nil {
		return nil, fmt.Errorf("encode webhook CA: %w", err)
	}
	return map[string][]byte{secretCert: crtPEM, secretKey: keyPEM, secretCA: caPEM}, nil
}

// Hosts are the names the API server may call: the URL's host, or the
// Service's DNS names.
func (c *Keeper) Hosts() (ips []net.IP, dns []string) {
	if c.opts.URL != "" {
		if u, err := url.Parse(c.opts.URL); err == nil {
			if ip := net.ParseIP(u.Hostname()); ip != nil {
				return []net.IP{ip}, nil
			}
			return nil, []string{u.Hostname()}
		}
	}
	svc, ns := c.opts.ServiceName, c.opts.Namespace
	return nil, []string{svc + "." + ns + ".svc", svc, svc + "." + ns, svc + "." + ns + ".svc.cluster.local"}
}

// Ready is closed once a certificate is in force.
func (c *Keeper) Ready() <-chan struct{} { return c.ready }

// Changed receives a value when the CA bundle changed since it was last
// received.
func (c *Keeper) Changed() <-chan struct{} { return c.changed }

// use puts a certificate in force when it differs from the current one.
func (c *Keeper) use(crt, key, ca []byte) error {
	if bytes.Equal(crt, c.current) && bytes.Equal(ca, c.CABundle()) {
		return nil
	}
	pair, err := tls.X509KeyPair(crt, key)
	if err != nil {
		return fmt.Errorf("webhook certificate and key: %w", err)
	}
	first := c.current == nil
	c.cert.Store(&pair)
	c.bundle.Store(&ca)
	c.current = crt
	c.readyOnce.Do(func() { close(c.ready) })
	if !first {
		c.log.Info("webhook certificate changed, in use now")
	}
	select {
	case c.changed <- struct{}{}:
	default:
	}
	return nil
}
