package config

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/retry"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// Write applies hooks' config patches to the ModuleConfig objects, as
// Source.Write does to the ConfigMap: a section sets or removes an
// object's spec.settings, an Enabled flag its spec.enabled; other fields
// are left alone. An object that does not exist is created when there is
// something to set, unless the edit says NoCreate: then Write returns
// ErrAbsent for it. Writes come back through Run as ordinary events.
func (s *ModuleConfigSource) Write(ctx context.Context, edit Edit) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	type change struct {
		settings    values.Values
		setSettings bool
		enabled     *bool
		setEnabled  bool
	}
	changes := map[string]*change{}
	get := func(name string) *change {
		if changes[name] == nil {
			changes[name] = &change{}
		}
		return changes[name]
	}
	for key, v := range edit.Sections {
		name := v1.GlobalModuleConfigName
		if key != GlobalKey {
			if err := checkModuleKey(key); err != nil {
				return fmt.Errorf("write moduleconfig: %w", err)
			}
			name = module.NameFor(key)
		}
		c := get(name)
		c.settings, c.setSettings = v, true
	}
	for key, e := range edit.Enabled {
		if err := checkModuleKey(key); err != nil {
			return fmt.Errorf("write moduleconfig: %w", err)
		}
		c := get(module.NameFor(key))
		c.enabled, c.setEnabled = e, true
	}
	for _, name := range slices.Sorted(maps.Keys(changes)) {
		c := changes[name]
		err := retry.RetryOnConflict(retry.DefaultBackoff, func() error {
			return s.edit(ctx, name, edit.NoCreate, func(spec map[string]any) {
				if c.setSettings {
					if c.settings == nil {
						delete(spec, "settings")
					} else {
						spec["settings"] = map[string]any(c.settings.DeepCopy())
					}
				}
				if c.setEnabled {
					if c.enabled == nil {
						delete(spec, "enabled")
					} else {
						spec["enabled"] = *c.enabled
					}
				}
			})
		})
		if err != nil {
			return fmt.Errorf("write moduleconfig %s: %w", name, err)
		}
	}
	return nil
}

// edit reads one object afresh, changes its spec with f and writes it
// back when it changed; an absent object is created unless noCreate.
func (s *ModuleConfigSource) edit(ctx context.Context, name string, noCreate bool, f func(spec map[string]any)) error {
	u, err := s.res.Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		if noCreate {
			return ErrAbsent
		}
		spec := map[string]any{}
		f(spec)
		if len(spec) == 0 {
			return nil
		}
		if spec, err = jsonMap(spec); err != nil {
			return err
		}
		obj := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": v1.APIVersion, "kind": v1.KindModuleConfig,
			"metadata": map[string]any{"name": name}, "spec": spec,
		}}
		_, err = s.res.Create(ctx, obj, metav1.CreateOptions{FieldManager: FieldManager})
		return err
	}
	if err != nil {
		return err
	}
	spec, _, _ := unstructured.NestedMap(u.Object, "spec")
	if spec == nil {
		spec = map[string]any{}
	}
	before := values.Checksum(spec)
	f(spec)
	if values.Checksum(spec) == before {
		return nil
	}
	if spec, err = jsonMap(spec); err != nil {
		return err
	}
	u.Object["spec"] = spec
	_, err = s.res.Update(ctx, u, metav1.UpdateOptions{FieldManager: FieldManager})
	return err
}

// jsonMap returns m as JSON decodes it: the types unstructured objects hold.
func jsonMap(m map[string]any) (map[string]any, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encode spec: %w", err)
	}
	var out map[string]any
	// Integers as int64, as the API machinery decodes them.
	if err := utiljson.Unmarshal(b, &out); err != nil {
		return nil, fmt.Errorf("decode spec: %w", err)
	}
	return out, nil
}
