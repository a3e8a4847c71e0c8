// Package hook speaks the hook protocol: it parses what a hook prints for
// --config into typed bindings, defines the binding-context wire format, and
// runs hooks and enabled scripts as child processes, collecting their outputs.
package hook

import (
	"fmt"
	"strings"
	"time"
)

// Kind tells whether a hook belongs to the global hooks or to a module; the
// two accept different lifecycle bindings.
type Kind int

// Hook kinds.
const (
	Global Kind = iota + 1
	Module
)

// String returns "global" or "module".
func (k Kind) String() string {
	switch k {
	case Global:
		return "global"
	case Module:
		return "module"
	default:
		return fmt.Sprintf("Kind(%d)", int(k))
	}
}

// Binding is the type of a binding as written in the hook configuration.
// For lifecycle bindings it is also the binding name in the binding context.
type Binding string

// Binding types. OnStartup is valid for both kinds; BeforeAll and AfterAll
// only for global hooks; the Helm ones only for module hooks.
const (
	OnStartup        Binding = "onStartup"
	BeforeAll        Binding = "beforeAll"
	AfterAll         Binding = "afterAll"
	BeforeHelm       Binding = "beforeHelm"
	AfterHelm        Binding = "afterHelm"
	BeforeDeleteHelm Binding = "beforeDeleteHelm"
	AfterDeleteHelm  Binding = "afterDeleteHelm"
	Schedule         Binding = "schedule"
	Kubernetes       Binding = "kubernetes"
)

// lifecycle lists the lifecycle bindings a hook of kind k may declare.
func (k Kind) lifecycle() []Binding {
	if k == Global {
		return []Binding{OnStartup, BeforeAll, AfterAll}
	}
	return []Binding{OnStartup, BeforeHelm, AfterHelm, BeforeDeleteHelm, AfterDeleteHelm}
}

// Config is the parsed, validated and defaulted configuration of one hook.
type Config struct {
	// Orders holds the ORDER of every lifecycle binding the hook declares.
	// Hooks of one lifecycle binding run in ascending ORDER, ties by path.
	Orders map[Binding]float64 `json:"orders,omitempty"`
	// Kubernetes lists the kubernetes bindings in configuration order.
	Kubernetes []KubernetesBinding `json:"kubernetes,omitempty"`
	// Schedules lists the schedule bindings in configuration order.
	Schedules []ScheduleBinding `json:"schedule,omitempty"`
	// Settings throttles the hook's executions.
	Settings Settings `json:"settings,omitzero"`
	// Validating, Mutating and Conversions list the webhook bindings in
	// configuration order (webhook.go).
	Validating  []AdmissionBinding  `json:"kubernetesValidating,omitempty"`
	Mutating    []AdmissionBinding  `json:"kubernetesMutating,omitempty"`
	Conversions []ConversionBinding `json:"kubernetesCustomResourceConversion,omitempty"`
}

// Order returns the ORDER of lifecycle binding b and whether the hook
// declares it.
func (c *Config) Order(b Binding) (float64, bool) {
	o, ok := c.Orders[b]
	return o, ok
}

// Settings are the hook-level settings: a token bucket that limits how often
// the hook runs. A zero ExecutionMinInterval means no limit.
type Settings struct {
	ExecutionMinInterval time.Duration `json:"executionMinInterval,omitempty"`
	// ExecutionBurst is at least 1 when ExecutionMinInterval is set.
	ExecutionBurst int `json:"executionBurst,omitempty"`
}

// ParseConfig parses the configuration a hook printed for --config (YAML or
// JSON, configVersion v1). Source names the hook in errors; kind selects the
// allowed lifecycle bindings. Every problem is reported, each as a
// *ConfigError, joined into one error.
func ParseConfig(source string, data []byte, kind Kind) (*Config, error) {
	if kind != Global && kind != Module {
		return nil, &ConfigError{Source: source, Err: fmt.Errorf("unknown hook kind %v", kind)}
	}
	p := &parser{source: source}
	tree, err := decodeTree(data)
	if err != nil {
		return nil, &ConfigError{Source: source, Err: err}
	}
	root := p.object("", tree)
	if root == nil {
		return nil, p.err()
	}
	if !p.version(root) {
		return nil, p.err()
	}
	cfg := p.config(root, kind)
	if err := p.err(); err != nil {
		return nil, err
	}
	return cfg, nil
}

// version checks configVersion; nothing else is parsed without a valid one.
// A v0 configuration (or one without a version) is refused with
// ErrConfigV0, whose message says how to convert it.
func (p *parser) version(root *object) bool {
	v, ok := root.get("configVersion")
	switch {
	case !ok:
		p.errs = append(p.errs, &ConfigError{Source: p.source, Err: fmt.Errorf("configVersion missing, read as v0: %w: %s", ErrConfigV0, convertV0)})
		return false
	case v == "v1":
		return true
	case v == "v0":
		p.errs = append(p.errs, &ConfigError{Source: p.source, Err: fmt.Errorf("%w: %s", ErrConfigV0, convertV0)})
		return false
	default:
		p.errorf("configVersion", "unsupported version %s (want \"v1\")", describe(v))
		return false
	}
}

func (p *parser) config(root *object, kind Kind) *Config {
	cfg := &Config{Orders: map[Binding]float64{}}
	for _, b := range kind.lifecycle() {
		if order, ok := root.number(string(b)); ok {
			cfg.Orders[b] = order
		}
	}
	p.wrongKind(root, kind)
	p.webhooks(root, cfg)
	kubeItems, _ := root.list("kubernetes")
	for i, item := range kubeItems {
		// An invalid item still takes its place so later paths keep their index.
		var k KubernetesBinding
		if o := p.object(itemPath("kubernetes", i), item); o != nil {
			k = p.kubernetes(o)
		}
		cfg.Kubernetes = append(cfg.Kubernetes, k)
	}
	scheduleItems, _ := root.list("schedule")
	for i, item := range scheduleItems {
		var sb ScheduleBinding
		if o := p.object(itemPath("schedule", i), item); o != nil {
			sb = p.schedule(o)
		}
		cfg.Schedules = append(cfg.Schedules, sb)
	}
	if o := root.child("settings"); o != nil {
		cfg.Settings = p.settings(o)
	}
	root.done()
	noBindings := len(cfg.Orders) == 0 && len(cfg.Kubernetes) == 0 && len(cfg.Schedules) == 0 && !cfg.HasWebhooks()
	if noBindings && len(p.errs) == 0 {
		p.errorf("", "no bindings (want at least one of %s, schedule, kubernetes, %s, %s, %s)", joinBindings(kind.lifecycle()), KubernetesValidating, KubernetesMutating, KubernetesConversion)
	}
	p.checkSnapshots(cfg)
	expandGroups(cfg)
	if len(cfg.Orders) == 0 {
		cfg.Orders = nil
	}
	return cfg
}

// wrongKind reports lifecycle bindings that belong to the other hook kind.
func (p *parser) wrongKind(root *object, kind Kind) {
	other := Module
	if kind == Module {
		other = Global
	}
	for _, b := range other.lifecycle() {
		if b == OnStartup || !root.has(string(b)) {
			continue
		}
		root.get(string(b))
		p.errorf(string(b), "binding is only valid for %s hooks, this is a %s hook", other, kind)
	}
}

func (p *parser) settings(o *object) Settings {
	var s Settings
	if v := o.str("executionMinInterval"); v != "" {
		d, err := time.ParseDuration(v)
		switch {
		case err != nil:
			p.errorf(o.field("executionMinInterval"), "invalid duration %q (want e.g. 3s)", v)
		case d < 0:
			p.errorf(o.field("executionMinInterval"), "negative duration %q", v)
		default:
			s.ExecutionMinInterval = d
		}
	}
	if burst, ok := o.integer("executionBurst"); ok {
		if burst < 0 {
			p.errorf(o.field("executionBurst"), "negative burst %d", burst)
		}
		s.ExecutionBurst = max(burst, 0)
	}
	if s.ExecutionMinInterval > 0 && s.ExecutionBurst == 0 {
		s.ExecutionBurst = 1
	}
	o.done()
	return s
}

func joinBindings(bs []Binding) string {
	s := make([]string, len(bs))
	for i, b := range bs {
		s[i] = string(b)
	}
	return strings.Join(s, ", ")
}
