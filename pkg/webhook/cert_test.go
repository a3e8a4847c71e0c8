package webhook

import (
	"bytes"
	"log/slog"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	certutil "k8s.io/client-go/util/cert"
	clocktesting "k8s.io/utils/clock/testing"
)

func TestCertsIssueRenewShare(t *testing.T) {
	opts := DefaultOptions()
	opts.Namespace, opts.URL = "ops", "https://127.0.0.1:9680"
	opts.CertValidity, opts.CertRenewBefore = 3*time.Hour, 30*time.Minute
	client := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Now())
	c := newCerts(opts, client, clk, slog.New(slog.DiscardHandler))
	must(t, c.refresh(t.Context()))
	first, err := c.getCertificate(nil)
	must(t, err)
	leaf, err := certutil.ParseCertsPEM(c.current)
	must(t, err)
	if len(leaf[0].IPAddresses) != 1 || leaf[0].IPAddresses[0].String() != "127.0.0.1" {
		t.Errorf("certificate IPs %v, want the URL's 127.0.0.1", leaf[0].IPAddresses)
	}
	secret, err := client.CoreV1().Secrets("ops").Get(t.Context(), opts.CertSecret, metav1.GetOptions{})
	must(t, err)
	if !bytes.Equal(secret.Data[secretCert], c.current) {
		t.Error("the Secret does not hold the certificate in use")
	}

	// A second replica reads the same certificate instead of issuing one.
	other := newCerts(opts, client, clk, slog.New(slog.DiscardHandler))
	must(t, other.refresh(t.Context()))
	if !bytes.Equal(other.current, c.current) {
		t.Error("a second replica issued its own certificate")
	}

	// Not due yet: nothing changes.
	clk.Step(time.Hour)
	must(t, c.refresh(t.Context()))
	if same, _ := c.getCertificate(nil); same != first {
		t.Error("certificate replaced before it was due")
	}

	// Within CertRenewBefore of expiry: renewed, the old CA still trusted.
	clk.Step(45 * time.Minute)
	must(t, c.refresh(t.Context()))
	renewed, _ := c.getCertificate(nil)
	if renewed == first {
		t.Fatal("certificate not renewed within --webhook-cert-renew-before of expiry")
	}
	cas, err := certutil.ParseCertsPEM(c.caBundle())
	must(t, err)
	if len(cas) != 2 {
		t.Errorf("CA bundle has %d certificates, want the new and the previous CA", len(cas))
	}
	select {
	case <-c.changed:
	default:
		t.Error("no change signalled for the configurations")
	}
	// The other replica picks it up from the Secret. (client-go's helper
	// dates certificates by the real clock: back to it, or the renewed
	// certificate would look due at once.)
	clk.SetTime(time.Now())
	must(t, other.refresh(t.Context()))
	if !bytes.Equal(other.current, c.current) {
		t.Error("the other replica did not pick up the renewed certificate")
	}
}
