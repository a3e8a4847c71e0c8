package config

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/addon-operator/addon-operator/pkg/values"
)

// LastAppliedType is the type of the Secret that keeps the last applied
// configuration: only a Secret of this type is read.
const LastAppliedType corev1.SecretType = "addon-operator.io/last-applied-config"

// The Secret that keeps the last applied configuration.
const (
	// LastAppliedSuffix follows the ConfigMap's name in the Secret's.
	LastAppliedSuffix = "-last-applied"
	lastAppliedData   = "config.json.gz"
	lastAppliedSum    = "sha256"
	// lastAppliedMaxBytes bounds the decompressed content read back:
	// a Secret holds at most 1 MiB, and its gzip could unpack to far more.
	lastAppliedMaxBytes = 8 << 20
)

// ErrLastAppliedUnreadable matches the errors of a saved configuration
// that exists but cannot be used: a wrong type, a checksum that does not
// match, a content that does not decode. The caller must hold whatever it
// has rather than take the Secret for absent.
var ErrLastAppliedUnreadable = errors.New("last applied configuration unreadable")

// LastApplied keeps the last configuration the operator accepted in a
// Secret in its namespace, so that a restart can hold it when the
// configuration source is missing or invalid. The content is gzip of the
// configuration as JSON, with its SHA-256 beside it; the methods are safe
// for concurrent use.
type LastApplied struct {
	client          kubernetes.Interface
	namespace, name string

	mu     sync.Mutex
	loaded bool
	last   *Config
	err    error
	saved  string // checksum of the content the Secret holds, "" unknown
}

// NewLastApplied returns the store of the Secret name in namespace.
func NewLastApplied(client kubernetes.Interface, namespace, name string) *LastApplied {
	return &LastApplied{client: client, namespace: namespace, name: name}
}

// Name returns the Secret's name.
func (l *LastApplied) Name() string { return l.name }

// lastAppliedDoc is the saved JSON.
type lastAppliedDoc struct {
	Global      values.Values            `json:"global,omitempty"`
	Modules     map[string]values.Values `json:"modules,omitempty"`
	Enabled     map[string]bool          `json:"enabled,omitempty"`
	Maintenance []string                 `json:"maintenance,omitempty"`
}

// Load reads the saved configuration once and remembers the answer: nil
// and no error when there is none (a first install); an error matching
// ErrLastAppliedUnreadable when the Secret cannot be used; any other
// error comes from the API, and the next Load asks again.
func (l *LastApplied) Load(ctx context.Context) (*Config, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.loaded {
		return l.last, l.err
	}
	s, err := l.client.CoreV1().Secrets(l.namespace).Get(ctx, l.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		l.loaded = true
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("get secret %s/%s: %w", l.namespace, l.name, err)
	}
	l.last, l.err = decodeLastApplied(s)
	if l.err != nil {
		l.err = fmt.Errorf("secret %s/%s: %w: %w", l.namespace, l.name, ErrLastAppliedUnreadable, l.err)
	} else {
		l.saved = string(s.Data[lastAppliedSum])
	}
	l.loaded = true
	return l.last, l.err
}

func decodeLastApplied(s *corev1.Secret) (*Config, error) {
	if s.Type != LastAppliedType {
		return nil, fmt.Errorf("type is %q, want %q", s.Type, LastAppliedType)
	}
	zr, err := gzip.NewReader(bytes.NewReader(s.Data[lastAppliedData]))
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", lastAppliedData, err)
	}
	raw, err := io.ReadAll(io.LimitReader(zr, lastAppliedMaxBytes+1))
	if err != nil {
		return nil, fmt.Errorf("key %s: %w", lastAppliedData, err)
	}
	if len(raw) > lastAppliedMaxBytes {
		return nil, fmt.Errorf("key %s: more than %d bytes unpacked", lastAppliedData, lastAppliedMaxBytes)
	}
	if got, want := checksum(raw), string(s.Data[lastAppliedSum]); got != want {
		return nil, fmt.Errorf("key %s: checksum %s does not match key %s", lastAppliedData, got, lastAppliedSum)
	}
	var doc lastAppliedDoc
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("key %s: %w", lastAppliedData, err)
	}
	c := &Config{Global: doc.Global, Modules: doc.Modules, Enabled: doc.Enabled, Maintenance: map[string]bool{}}
	if c.Global == nil {
		c.Global = values.Values{}
	}
	if c.Modules == nil {
		c.Modules = map[string]values.Values{}
	}
	if c.Enabled == nil {
		c.Enabled = map[string]bool{}
	}
	for _, key := range doc.Maintenance {
		c.Maintenance[key] = true
	}
	// The keys obey the ConfigMap's rules; the values meet their schemas
	// when they are applied, as any configuration does.
	for _, key := range slices.Concat(slices.Collect(maps.Keys(c.Modules)), slices.Collect(maps.Keys(c.Enabled)), doc.Maintenance) {
		if err := checkModuleKey(key); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Save writes c to the Secret unless it holds c already, creating it when
// it does not exist.
func (l *LastApplied) Save(ctx context.Context, c *Config) error {
	raw, err := encodeLastApplied(c)
	if err != nil {
		return err
	}
	sum := checksum(raw)
	l.mu.Lock()
	defer l.mu.Unlock()
	if sum == l.saved {
		return nil
	}
	var gz bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression) // the level is valid
	if _, err := zw.Write(raw); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	data := map[string][]byte{lastAppliedData: gz.Bytes(), lastAppliedSum: []byte(sum)}
	secrets := l.client.CoreV1().Secrets(l.namespace)
	cur, err := secrets.Get(ctx, l.name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		s := &corev1.Secret{
			ObjectMeta: metav1.ObjectMeta{Name: l.name, Labels: map[string]string{"app.kubernetes.io/managed-by": "addon-operator"}},
			Type:       LastAppliedType, Data: data,
		}
		_, err = secrets.Create(ctx, s, metav1.CreateOptions{FieldManager: FieldManager})
	case err != nil:
	case cur.Type != LastAppliedType:
		// Not ours: the type cannot change, and the Secret is left alone.
		err = fmt.Errorf("it has type %q, not %q: delete it or choose another --config-map", cur.Type, LastAppliedType)
	default:
		cur.Data = data
		_, err = secrets.Update(ctx, cur, metav1.UpdateOptions{FieldManager: FieldManager})
	}
	if err != nil {
		return fmt.Errorf("save last applied configuration to secret %s/%s: %w", l.namespace, l.name, err)
	}
	l.saved = sum
	return nil
}

func encodeLastApplied(c *Config) ([]byte, error) {
	doc := lastAppliedDoc{}
	if c != nil {
		doc = lastAppliedDoc{Global: c.Global, Modules: c.Modules, Enabled: c.Enabled}
		for key, on := range c.Maintenance {
			if on {
				doc.Maintenance = append(doc.Maintenance, key)
			}
		}
		slices.Sort(doc.Maintenance)
	}
	raw, err := json.Marshal(doc) // maps marshal in key order: one content, one checksum
	if err != nil {
		return nil, fmt.Errorf("encode last applied configuration: %w", err)
	}
	return raw, nil
}

func checksum(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Sum returns a short checksum of the configuration as LastApplied saves
// it, to name one in logs and Events without its values.
func (c *Config) Sum() string {
	raw, err := encodeLastApplied(c)
	if err != nil {
		return "unknown"
	}
	return checksum(raw)[:16]
}
