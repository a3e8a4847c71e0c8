package config

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestLastAppliedRoundTrip(t *testing.T) {
	client := fake.NewClientset()
	l := NewLastApplied(client, "ns", "cfg-last-applied")
	if c, err := l.Load(t.Context()); c != nil || err != nil {
		t.Fatalf("Load() without a Secret = %v, %v; want nil, nil", c, err)
	}
	want := &Config{
		Global:      values.Values{"clusterName": "prod"},
		Modules:     map[string]values.Values{"certManager": {"token": "s3cret", "n": float64(3)}},
		Enabled:     map[string]bool{"certManager": true, "ingress": false},
		Maintenance: map[string]bool{"ingress": true},
	}
	if err := l.Save(t.Context(), want); err != nil {
		t.Fatal(err)
	}
	s, err := client.CoreV1().Secrets("ns").Get(t.Context(), "cfg-last-applied", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if s.Type != LastAppliedType || len(s.Data[lastAppliedSum]) != 64 {
		t.Errorf("Secret type %q, checksum %q; want %q and a SHA-256", s.Type, s.Data[lastAppliedSum], LastAppliedType)
	}
	if bytes.Contains(s.Data[lastAppliedData], []byte("s3cret")) {
		t.Error("the saved content is not compressed")
	}
	got, err := NewLastApplied(client, "ns", "cfg-last-applied").Load(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("loaded (-want +got):\n%s", diff)
	}
}

func TestLastAppliedSavesOnlyChanges(t *testing.T) {
	client := fake.NewClientset()
	writes := 0
	client.PrependReactor("*", "secrets", func(a k8stesting.Action) (bool, runtime.Object, error) {
		if a.GetVerb() == "create" || a.GetVerb() == "update" {
			writes++
		}
		return false, nil, nil
	})
	l := NewLastApplied(client, "ns", "s")
	c := &Config{Enabled: map[string]bool{"a": true}}
	for range 3 {
		if err := l.Save(t.Context(), c); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Save(t.Context(), &Config{Enabled: map[string]bool{"a": false}}); err != nil {
		t.Fatal(err)
	}
	if writes != 2 {
		t.Errorf("%d writes, want 2: one per different content", writes)
	}
}

func TestLastAppliedUnreadable(t *testing.T) {
	good := func() *corev1.Secret {
		raw, err := encodeLastApplied(&Config{Enabled: map[string]bool{"a": true}})
		if err != nil {
			t.Fatal(err)
		}
		return &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Type: LastAppliedType,
			Data: map[string][]byte{lastAppliedData: gz(t, raw), lastAppliedSum: []byte(checksum(raw))},
		}
	}
	tests := []struct {
		name   string
		modify func(s *corev1.Secret)
	}{
		{"another type", func(s *corev1.Secret) { s.Type = corev1.SecretTypeOpaque }},
		{"a checksum that does not match", func(s *corev1.Secret) {
			s.Data[lastAppliedData] = gz(t, []byte(`{"enabled":{"b":true}}`))
		}},
		{"not gzip", func(s *corev1.Secret) { s.Data[lastAppliedData] = []byte("{}") }},
		{"not JSON", func(s *corev1.Secret) {
			s.Data[lastAppliedData], s.Data[lastAppliedSum] = gz(t, []byte("nope")), []byte(checksum([]byte("nope")))
		}},
		{"a key no module can have", func(s *corev1.Secret) {
			raw := []byte(`{"enabled":{"Not_A_Key":true}}`)
			s.Data[lastAppliedData], s.Data[lastAppliedSum] = gz(t, raw), []byte(checksum(raw))
		}},
		{"a gzip bomb", func(s *corev1.Secret) {
			raw := bytes.Repeat([]byte(" "), lastAppliedMaxBytes+1)
			s.Data[lastAppliedData], s.Data[lastAppliedSum] = gz(t, raw), []byte(checksum(raw))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := good()
			tt.modify(s)
			c, err := NewLastApplied(fake.NewClientset(s), "ns", "s").Load(t.Context())
			if c != nil || !errors.Is(err, ErrLastAppliedUnreadable) {
				t.Errorf("Load() = %v, %v; want an error matching ErrLastAppliedUnreadable", c, err)
			}
		})
	}
	if c, err := NewLastApplied(fake.NewClientset(good()), "ns", "s").Load(t.Context()); err != nil || !c.Enabled["a"] {
		t.Errorf("Load() of the unmodified Secret = %v, %v", c, err)
	}
}

func TestLastAppliedLeavesAForeignSecretAlone(t *testing.T) {
	foreign := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "s", Namespace: "ns"}, Type: corev1.SecretTypeOpaque,
		Data: map[string][]byte{"k": []byte("v")}}
	client := fake.NewClientset(foreign)
	if err := NewLastApplied(client, "ns", "s").Save(t.Context(), &Config{}); err == nil {
		t.Error("Save() over a Secret of another type succeeded")
	}
	got, err := client.CoreV1().Secrets("ns").Get(t.Context(), "s", metav1.GetOptions{})
	if err != nil || string(got.Data["k"]) != "v" {
		t.Errorf("the foreign Secret changed: %v, %v", got, err)
	}
}

func gz(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
