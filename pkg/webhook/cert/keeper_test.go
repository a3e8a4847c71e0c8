package cert

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
	opts := Options{
		Namespace: "ops", URL: "https://127.0.0.1:9680", Secret: "addon-operator-webhook-tls",
		Validity: 3 * time.Hour, RenewBefore: 30 * time.Minute, CheckInterval: time.Minute,
	}
	client := fake.NewClientset()
	clk := clocktesting.NewFakeClock(time.Now())
	c := New(opts, client, clk, slog.New(slog.DiscardHandler))
	must(t, c.Refresh(t.Context()))
	first, err := c.GetCertificate(nil)
	must(t, err)
	leaf, err := certutil.ParseCertsPEM(c.current)
	must(t, err)
	if len(leaf[0].IPAddresses) != 1 || leaf[0].IPAddresses[0].String() != "127.0.0.1" {
		t.Errorf("certificate IPs %v, want the URL's 127.0.0.1", leaf[0].IPAddresses)
	}
	secret, err := client.CoreV1().Secrets("ops").Get(t.Context(), opts.Secret, metav1.GetOptions{})
	must(t, err)
	if !bytes.Equal(secret.Data[secretCert], c.current) {
		t.Error("the Secret does not hold the certificate in use")
	}

	// A second replica reads the same certificate instead of issuing one.
	other := New(opts, client, clk, slog.New(slog.DiscardHandler))
	must(t, other.Refresh(t.Context()))
	if !bytes.Equal(other.current, c.current) {
		t.Error("a second replica issued its own certificate")
	}

	// Not due yet: nothing changes.
	clk.Step(time.Hour)
	must(t, c.Refresh(t.Context()))
	if same, _ := c.GetCertificate(nil); same != first {
		t.Error("certificate replaced before it was due")
	}

	// Within CertRenewBefore of expiry: renewed, the old CA still trusted.
	clk.Step(45 * time.Minute)
	must(t, c.Refresh(t.Context()))
	renewed, _ := c.GetCertificate(nil)
	if renewed == first {
		t.Fatal("certificate not renewed within --webhook-cert-renew-before of expiry")
	}
	cas, err := certutil.ParseCertsPEM(c.CABundle())
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
	must(t, other.Refresh(t.Context()))
	if !bytes.Equal(other.current, c.current) {
		t.Error("the other replica did not pick up the renewed certificate")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
