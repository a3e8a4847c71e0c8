package bench

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// directClient posts AdmissionReviews to a webhook server over HTTPS, as
// the API server does, trusting only the bench's CA; HTTP/1.1 with
// connections kept alive, one per concurrent request.
type directClient struct {
	http *http.Client
	seq  atomic.Int64
}

func newDirectClient(caFile string, conns int) (*directClient, error) {
	ca, err := os.ReadFile(caFile)
	if err != nil {
		return nil, fmt.Errorf("read the webhook CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", caFile)
	}
	tr := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		MaxIdleConnsPerHost: conns,
	}
	return &directClient{http: &http.Client{Transport: tr}}, nil
}

// review posts the AdmissionReview of a dry-run create of a ConfigMap in
// ns labelled hook=label to url, and checks that it is allowed.
func (c *directClient) review(ctx context.Context, url, ns, label string) error {
	uid := types.UID("bench-" + strconv.FormatInt(c.seq.Add(1), 10))
	body, err := admissionReview(uid, ns, label)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s: %s", url, resp.Status, data)
	}
	var out admissionv1.AdmissionReview
	if err := json.Unmarshal(data, &out); err != nil {
		return fmt.Errorf("%s: decode the answer: %w", url, err)
	}
	if out.Response == nil || out.Response.UID != uid || !out.Response.Allowed {
		return fmt.Errorf("%s: unexpected answer %s", url, data)
	}
	return nil
}

// admissionReview is what the API server sends for a dry-run create of a
// ConfigMap named by generateName "ok-" with the label hook=label.
func admissionReview(uid types.UID, ns, label string) ([]byte, error) {
	cm := corev1.ConfigMap{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{GenerateName: "ok-", Namespace: ns, Labels: map[string]string{"hook": label}},
	}
	obj, err := json.Marshal(cm)
	if err != nil {
		return nil, err
	}
	opts, err := json.Marshal(metav1.CreateOptions{TypeMeta: metav1.TypeMeta{APIVersion: "meta.k8s.io/v1", Kind: "CreateOptions"}, DryRun: []string{metav1.DryRunAll}})
	if err != nil {
		return nil, err
	}
	dry := true
	return json.Marshal(admissionv1.AdmissionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview"},
		Request: &admissionv1.AdmissionRequest{
			UID:             uid,
			Kind:            metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			Resource:        metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			RequestKind:     &metav1.GroupVersionKind{Version: "v1", Kind: "ConfigMap"},
			RequestResource: &metav1.GroupVersionResource{Version: "v1", Resource: "configmaps"},
			Namespace:       ns,
			Operation:       admissionv1.Create,
			Object:          runtime.RawExtension{Raw: obj},
			Options:         runtime.RawExtension{Raw: opts},
			DryRun:          &dry,
		},
	})
}
