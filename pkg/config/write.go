package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/yaml"

	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// Edit is a set of ConfigMap key changes for Write. Keys not named in it
// are left as they are.
type Edit struct {
	// Sections sets, by GlobalKey or module key, a section's config values;
	// a nil Values deletes the key, an empty one writes "{}".
	Sections map[string]values.Values
	// Enabled sets, by module key, the "<moduleKey>Enabled" flag; a nil
	// pointer deletes the key.
	Enabled map[string]*bool
	// NoCreate makes Write return ErrAbsent, writing nothing, when the
	// ConfigMap does not exist, instead of creating it with only these
	// keys. A writer uses it once the ConfigMap was seen: creating it anew
	// would make a deleted ConfigMap look recreated with partial content.
	NoCreate bool
}

// ErrAbsent is returned by Write for an Edit with NoCreate when the
// ConfigMap does not exist.
var ErrAbsent = errors.New("configmap does not exist")

// Write applies edit to the ConfigMap: each named key is set (sections as
// YAML with sorted map keys) or deleted, and no other key is touched. It
// reads the ConfigMap afresh and updates it, retrying when another writer
// got in between (a conflict), and creates the ConfigMap when it is absent
// (unless the edit only deletes, or sets NoCreate). An edit that changes nothing writes
// nothing. An edit naming a key that is neither GlobalKey nor a module key
// is rejected before anything is written.
//
// The write comes back through Run as an ordinary event; a caller that
// already holds the written values sees no change in Diff against them.
func (s *Source) Write(ctx context.Context, edit Edit) error {
	start := time.Now()
	ops, err := edit.encode()
	if err != nil {
		return fmt.Errorf("write configmap %s/%s: %w", s.namespace, s.name, err)
	}
	if len(ops) == 0 {
		return nil
	}
	retriable := func(err error) bool { return apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) }
	if err := retry.OnError(retry.DefaultBackoff, retriable, func() error { return s.apply(ctx, ops, edit.NoCreate) }); err != nil {
		return fmt.Errorf("write configmap %s/%s: %w", s.namespace, s.name, err)
	}
	s.log.Debug("config written",
		slog.String(logkey.Namespace, s.namespace), slog.String(logkey.Name, s.name), slog.Duration(logkey.Duration, time.Since(start)))
	return nil
}

// apply makes one read-modify-write attempt.
func (s *Source) apply(ctx context.Context, ops map[string]*string, noCreate bool) error {
	configMaps := s.client.CoreV1().ConfigMaps(s.namespace)
	cm, err := configMaps.Get(ctx, s.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) && noCreate {
		return ErrAbsent
	}
	if apierrors.IsNotFound(err) {
		data, changed := applyOps(nil, ops)
		if !changed {
			return nil
		}
		cm = &corev1.ConfigMap{
			ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: s.namespace},
			Data:       data,
		}
		if _, err := configMaps.Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("create: %w", err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("get: %w", err)
	}
	data, changed := applyOps(cm.Data, ops)
	if !changed {
		return nil
	}
	cm.Data = data
	if _, err := configMaps.Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	return nil
}

// applyOps returns a copy of data with ops applied (a nil value deletes the
// key) and whether it differs from data.
func applyOps(data map[string]string, ops map[string]*string) (map[string]string, bool) {
	out := maps.Clone(data)
	if out == nil {
		out = map[string]string{}
	}
	changed := false
	for key, val := range ops {
		old, had := out[key]
		switch {
		case val == nil && had:
			delete(out, key)
			changed = true
		case val != nil && (!had || old != *val):
			out[key] = *val
			changed = true
		}
	}
	return out, changed
}

// encode turns the edit into ConfigMap key operations: a value to set, or
// nil to delete. Every wrong key is reported.
func (e Edit) encode() (map[string]*string, error) {
	ops := make(map[string]*string, len(e.Sections)+len(e.Enabled))
	var errs []error
	for _, key := range slices.Sorted(maps.Keys(e.Sections)) {
		if key != GlobalKey {
			if err := checkModuleKey(key); err != nil {
				errs = append(errs, fmt.Errorf("section %q: %w", key, err))
				continue
			}
		}
		v := e.Sections[key]
		if v == nil {
			ops[key] = nil
			continue
		}
		text, err := encodeSection(v)
		if err != nil {
			errs = append(errs, fmt.Errorf("section %q: %w", key, err))
			continue
		}
		ops[key] = &text
	}
	for _, key := range slices.Sorted(maps.Keys(e.Enabled)) {
		if err := checkModuleKey(key); err != nil {
			errs = append(errs, fmt.Errorf("enabled flag of %q: %w", key, err))
			continue
		}
		var text *string
		if on := e.Enabled[key]; on != nil {
			text = new(strconv.FormatBool(*on))
		}
		ops[EnabledKey(key)] = text
	}
	return ops, errors.Join(errs...)
}

// encodeSection serialises section values as YAML with map keys sorted, so
// equal values always give equal text. Parse reads it back to equal values
// (numbers as float64, as from any YAML).
func encodeSection(v values.Values) (string, error) {
	out, err := yaml.Marshal(map[string]any(v))
	if err != nil {
		return "", fmt.Errorf("encode yaml: %w", err)
	}
	return string(out), nil
}
