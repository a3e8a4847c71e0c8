package server

import (
	"crypto/tls"
	"fmt"
	"net"

	"k8s.io/client-go/util/cert"
)

// tlsHost names the self-signed serving certificate.
const tlsHost = "addon-operator"

// selfSignedTLS returns a TLS configuration serving a certificate made for
// this run, signed by a CA of its own that nobody else holds: it keeps
// bearer tokens and answers off the wire, but clients cannot verify it and
// must skip verification (Prometheus: tlsConfig.insecureSkipVerify).
func selfSignedTLS() (*tls.Config, error) {
	certPEM, keyPEM, err := cert.GenerateSelfSignedCertKey(tlsHost, []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback}, []string{"localhost"})
	if err != nil {
		return nil, fmt.Errorf("generate serving certificate: %w", err)
	}
	pair, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, fmt.Errorf("load serving certificate: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}
