package config

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/values"
)

// FieldManager is the server-side apply field manager of the operator's
// writes to ModuleConfig status.
const FieldManager = "addon-operator"

// Checks are what a source that checks the settings it reads (the
// ModuleConfig objects') asks of the modules discovered, as
// ModuleConfigOptions' fields of the same names. The operator builds them
// before the source, which gets them at construction.
type Checks struct {
	Known    func(module string) bool
	Validate func(c *Config) (moduleErrs map[string]error, globalErr error)
}

// ModuleConfigOptions configure a ModuleConfigSource.
type ModuleConfigOptions struct {
	Dynamic dynamic.Interface
	// Known reports whether a module of that name exists.
	Known func(module string) bool
	// Validate checks a configuration against the config-values schemas:
	// errors by module name, and the global section's error.
	Validate func(c *Config) (moduleErrs map[string]error, globalErr error)
	// LastApplied is the configuration saved before this start
	// (LastApplied.Load), nil when none: an object rejected at the first
	// check keeps its part of it in force, as an object rejected later
	// keeps its last accepted spec.
	LastApplied *Config
	Logger      *slog.Logger
}

// ModuleConfigSource reads and watches ModuleConfig objects
// (addon-operator.io/v1alpha1) and sends the same Events as Source: one
// object per module gives its section (spec.settings) and Enabled flag
// (spec.enabled), the object "global" the global section. Each object is
// checked on its own; a rejected object's last accepted spec stays in
// force, and its status says why. Run owns lastGood and written.
type ModuleConfigSource struct {
	opts ModuleConfigOptions
	res  dynamic.NamespaceableResourceInterface
	// events is what Run observes, made by NewModuleConfigSource.
	events chan Event

	lastGood map[string]mcSpec // by object name
	written  map[string]string // status message written, by object name and generation
	mu       sync.Mutex        // guards nothing but Write's read-modify-write against itself
}

// mcSpec is one object's accepted content.
type mcSpec struct {
	settings    values.Values // nil: no section
	enabled     *bool
	maintenance bool
}

// NewModuleConfigSource returns a source of ModuleConfig objects.
func NewModuleConfigSource(opts ModuleConfigOptions) *ModuleConfigSource {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &ModuleConfigSource{opts: opts, res: opts.Dynamic.Resource(v1.ModuleConfigsResource()), events: make(chan Event),
		lastGood: map[string]mcSpec{}, written: map[string]string{}}
}

// Available reports whether ModuleConfig objects can be listed: false with
// the reason when the CRD is not installed or the operator may not list
// them; an error when the API server does not answer.
func Available(ctx context.Context, dyn dynamic.Interface) (ok bool, reason, err error) {
	_, err = dyn.Resource(v1.ModuleConfigsResource()).List(ctx, metav1.ListOptions{Limit: 1})
	switch {
	case err == nil:
		return true, nil, nil
	case apierrors.IsNotFound(err), apierrors.IsForbidden(err):
		return false, err, nil
	default:
		return false, nil, fmt.Errorf("list moduleconfigs: %w", err)
	}
}

// Events is the channel Run sends its events on, as Source's: the source
// makes it and alone sends on it.
func (s *ModuleConfigSource) Events() <-chan Event { return s.events }

// Run watches every ModuleConfig until ctx is done, as Source.Run watches
// the ConfigMap: the first Event once the informer synced, then one per
// change of any object's spec (its generation), creation or deletion.
// An Event is Absent when no ModuleConfig object exists.
func (s *ModuleConfigSource) Run(ctx context.Context) error {
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return s.res.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return s.res.Watch(ctx, opts)
		},
	}
	// Lets fake clients, which cannot stream lists, opt out of WatchList.
	informer := cache.NewSharedIndexInformer(cache.ToListWatcherWithWatchListSemantics(lw, s.opts.Dynamic),
		&unstructured.Unstructured{}, 0, cache.Indexers{})
	dirty := make(chan struct{}, 1)
	notify := func() {
		select {
		case dirty <- struct{}{}:
		default:
		}
	}
	if _, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { notify() }, UpdateFunc: func(_, _ any) { notify() }, DeleteFunc: func(any) { notify() },
	}); err != nil {
		return fmt.Errorf("watch moduleconfigs: %w", err)
	}
	informerCtx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { informer.RunWithContext(informerCtx) })
	defer func() { stop(); wg.Wait() }()
	// The informer's own done channel, not WaitForCacheSync, which polls
	// every 100 ms: that poll was a tenth of a second of every start.
	select {
	case <-informer.HasSyncedChecker().Done():
	case <-ctx.Done():
		return nil
	}
	first, last := true, ""
	for {
		objs := informer.GetStore().List()
		if key := contentKey(objs); first || key != last {
			ev := s.event(ctx, objs)
			ev.ResourceVersion = key
			select {
			case s.events <- ev:
			case <-ctx.Done():
				return nil
			}
			first, last = false, key
		}
		select {
		case <-dirty:
		case <-ctx.Done():
			return nil
		}
	}
}

// contentKey changes exactly when an object's spec changes, or an object
// comes or goes; status writes do not change it.
func contentKey(objs []any) string {
	parts := make([]string, 0, len(objs))
	for _, o := range objs {
		if u, ok := o.(*unstructured.Unstructured); ok {
			// The confirmation annotation counts: it changes what an
			// empty content means.
			parts = append(parts, u.GetName()+"/"+string(u.GetUID())+"/"+strconv.FormatInt(u.GetGeneration(), 10)+
				"/"+u.GetAnnotations()[ConfirmEmptyAnnotation])
		}
	}
	slices.Sort(parts)
	sum := sha256.Sum256([]byte(strings.Join(parts, ",")))
	return hex.EncodeToString(sum[:8])
}

// event builds the configuration from the objects: each checked on its
// own, a rejected one replaced by its last accepted spec. It writes each
// object's status.
func (s *ModuleConfigSource) event(ctx context.Context, objs []any) Event {
	c := &Config{Global: values.Values{}, Modules: map[string]values.Values{}, Enabled: map[string]bool{}}
	seen := map[string]bool{}
	confirmed := false
	for _, o := range objs {
		u, ok := o.(*unstructured.Unstructured)
		if !ok {
			continue
		}
		name := u.GetName()
		seen[name] = true
		confirmed = confirmed || u.GetAnnotations()[ConfirmEmptyAnnotation] == "true"
		spec, err := s.check(u)
		if err == nil {
			s.lastGood[name] = spec
		} else if _, ok := s.lastGood[name]; !ok {
			s.seed(name)
		}
		s.writeStatus(ctx, u, err)
		if good, ok := s.lastGood[name]; ok {
			good.addTo(c, name)
		}
	}
	for name := range s.lastGood {
		if !seen[name] {
			delete(s.lastGood, name)
		}
	}
	for key := range s.written {
		if name, _, _ := strings.Cut(key, "/"); !seen[name] {
			delete(s.written, key)
		}
	}
	// Only the objects of the first reading take from the saved
	// configuration; later ones have this run's own history.
	s.opts.LastApplied = nil
	return Event{Config: c, Absent: len(seen) == 0, Confirmed: confirmed, ModuleConfigs: true}
}

// seed takes an object's last accepted spec from the configuration saved
// before this start (ModuleConfigOptions.LastApplied): an object made
// invalid while the operator was stopped keeps the settings it had.
func (s *ModuleConfigSource) seed(name string) {
	last := s.opts.LastApplied
	if last == nil {
		return
	}
	if name == v1.GlobalModuleConfigName {
		if len(last.Global) > 0 {
			s.lastGood[name] = mcSpec{settings: last.Global}
		}
		return
	}
	key := module.KeyFor(name)
	var sp mcSpec
	found := false
	if v, ok := last.Modules[key]; ok {
		sp.settings, found = v, true
	}
	if on, ok := last.Enabled[key]; ok {
		sp.enabled, found = &on, true
	}
	if last.Maintenance[key] {
		sp.maintenance, found = true, true
	}
	if found {
		s.lastGood[name] = sp
	}
}

func (sp mcSpec) addTo(c *Config, name string) {
	if name == v1.GlobalModuleConfigName {
		if sp.settings != nil {
			c.Global = sp.settings
		}
		return
	}
	key := module.KeyFor(name)
	if sp.settings != nil {
		c.Modules[key] = sp.settings
	}
	if sp.enabled != nil {
		c.Enabled[key] = *sp.enabled
	}
	if sp.maintenance {
		if c.Maintenance == nil {
			c.Maintenance = map[string]bool{}
		}
		c.Maintenance[key] = true
	}
}

// errUnknownModule: no module has the object's name.
var errUnknownModule = errors.New("no module of this name")

// check decodes and validates one object.
func (s *ModuleConfigSource) check(u *unstructured.Unstructured) (mcSpec, error) {
	var mc v1.ModuleConfig
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &mc); err != nil {
		return mcSpec{}, fmt.Errorf("decode: %w", err)
	}
	name := mc.Name
	spec := mcSpec{enabled: mc.Spec.Enabled}
	on, err := parseMaintenance(mc.Spec.Maintenance)
	if err != nil {
		return mcSpec{}, fmt.Errorf("spec.maintenance: %w", err)
	}
	spec.maintenance = on
	if mc.Spec.Settings != nil {
		spec.settings = values.Values(mc.Spec.Settings)
	}
	one := &Config{Global: values.Values{}, Modules: map[string]values.Values{}, Enabled: map[string]bool{}}
	if name == v1.GlobalModuleConfigName {
		if spec.enabled != nil {
			return mcSpec{}, errors.New("spec.enabled: the global settings cannot be switched off")
		}
	} else if !module.ValidName(name) || s.opts.Known == nil || !s.opts.Known(name) {
		return mcSpec{}, errUnknownModule
	}
	spec.addTo(one, name)
	if name != v1.GlobalModuleConfigName {
		one.Enabled[module.KeyFor(name)] = true // validate the section even without one
	}
	if s.opts.Validate == nil {
		return spec, nil
	}
	moduleErrs, globalErr := s.opts.Validate(one)
	if globalErr != nil && name == v1.GlobalModuleConfigName {
		return mcSpec{}, fmt.Errorf("spec.settings: %w", globalErr)
	}
	if err := moduleErrs[name]; err != nil {
		return mcSpec{}, fmt.Errorf("spec.settings: %w", err)
	}
	return spec, nil
}

// writeStatus says whether the object's spec is in use, once per
// generation and outcome.
func (s *ModuleConfigSource) writeStatus(ctx context.Context, u *unstructured.Unstructured, checkErr error) {
	gen := u.GetGeneration()
	msg, reason, inUse := "in use", v1.ReasonSettingsInUse, true
	switch {
	case errors.Is(checkErr, errUnknownModule):
		msg, reason, inUse = "not in use: no module named "+u.GetName(), v1.ReasonUnknownModule, false
	case checkErr != nil:
		msg, reason, inUse = "not in use: "+checkErr.Error(), v1.ReasonInvalidSettings, false
		if _, ok := s.lastGood[u.GetName()]; ok {
			msg += "; the last accepted spec stays in force"
		}
	}
	key := u.GetName() + "/" + string(u.GetUID())
	if s.written[key] == strconv.FormatInt(gen, 10)+msg {
		return
	}
	var cur v1.ModuleConfig
	_ = runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, &cur)
	conds := cur.Status.Conditions
	ready := metav1.ConditionTrue
	if !inUse {
		ready = metav1.ConditionFalse
	}
	meta.SetStatusCondition(&conds, metav1.Condition{Type: v1.ConditionReady, Status: ready, Reason: reason, Message: msg, ObservedGeneration: gen})
	meta.SetStatusCondition(&conds, metav1.Condition{Type: v1.ConditionStalled, Status: map[bool]metav1.ConditionStatus{true: metav1.ConditionFalse, false: metav1.ConditionTrue}[inUse],
		Reason: reason, Message: msg, ObservedGeneration: gen})
	obj := v1.ModuleConfig{TypeMeta: metav1.TypeMeta{APIVersion: v1.APIVersion, Kind: v1.KindModuleConfig},
		ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), UID: types.UID("")},
		Status:     v1.ModuleConfigStatus{Message: msg, ObservedGeneration: gen, Conditions: conds}}
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(&obj)
	if err == nil {
		delete(m["metadata"].(map[string]any), "creationTimestamp")
		_, err = s.res.ApplyStatus(ctx, u.GetName(), &unstructured.Unstructured{Object: m}, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	}
	if err != nil {
		s.opts.Logger.Warn("moduleconfig status not written", slog.String(logkey.Name, u.GetName()), logkey.Err(err))
		return
	}
	s.written[key] = strconv.FormatInt(gen, 10) + msg
	if !inUse {
		s.opts.Logger.Error("moduleconfig rejected", slog.String(logkey.Name, u.GetName()), slog.String(logkey.Reason, msg))
	}
}

// CheckModuleConfig checks one ModuleConfig object, as JSON, as the source
// checks the objects it reads: its name must be a module's (Known) or
// global, its maintenance mode one the operator knows, and its settings
// must pass Validate. Admission uses it, so the API server refuses what
// the source would not put in use.
func CheckModuleConfig(object []byte, known func(module string) bool,
	validate func(c *Config) (moduleErrs map[string]error, globalErr error),
) error {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(object); err != nil {
		return fmt.Errorf("decode ModuleConfig: %w", err)
	}
	s := &ModuleConfigSource{opts: ModuleConfigOptions{Known: known, Validate: validate}}
	_, err := s.check(u)
	if errors.Is(err, errUnknownModule) {
		return fmt.Errorf("metadata.name: %q: %w", u.GetName(), err)
	}
	return err
}
