package webhook

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sync"
	"time"

	admissionregv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/webhook/cert"
)

// fieldManager owns, in server-side apply, what the operator writes into
// the configurations and CRDs.
const fieldManager = "addon-operator-webhooks"

// servingWait bounds how long a write waits for the server to answer its
// own probe; then the caller fails and retries.
const servingWait = 30 * time.Second

// configurer writes the two webhook configurations and the conversion
// settings of CRDs from the registry. Its mutex orders the writes of Set,
// Remove and the resync loop.
type configurer struct {
	opts            Options
	kube            kubernetes.Interface
	crds            apiextensionsclient.Interface
	reg             *registry
	certs           *cert.Keeper
	clock           clock.Clock
	log             *slog.Logger
	checksConfigMap func() bool
	// checksModuleConfigs is true when ModuleConfig objects are checked.
	checksModuleConfigs func() bool
	// guardsWrites is true when writes to ModuleConfigs and the ConfigMap
	// are guarded by writer and by what they disable.
	guardsWrites func() bool

	mu sync.Mutex
	// converted are the CRDs whose conversion this replica set, to set
	// back to None when their last binding goes.
	converted map[string]bool
}

// run re-asserts the configurations when the CA bundle changes and every
// CertCheckInterval, so that a CRD re-applied without its conversion, or
// a configuration edited by someone, is put right.
func (c *configurer) run(ctx context.Context, serving <-chan struct{}) error {
	for {
		if err := c.sync(ctx, serving); err != nil && ctx.Err() == nil {
			c.log.Error("webhook configurations not written, will retry", logkey.Err(err))
		}
		select {
		case <-ctx.Done():
			return nil
		case <-c.certs.Changed():
		case <-c.clock.After(c.opts.CertCheckInterval):
		}
	}
}

func (c *configurer) sync(ctx context.Context, serving <-chan struct{}) error {
	return c.syncWithout(ctx, serving, "\x00")
}

// syncWithout writes the configurations with every registered owner but
// skip, once the server answers.
func (c *configurer) syncWithout(ctx context.Context, serving <-chan struct{}, skip string) error {
	wait, cancel := context.WithTimeout(ctx, servingWait)
	defer cancel()
	select {
	case <-serving:
	case <-wait.Done():
		return fmt.Errorf("wait for the webhook server to answer: %w", wait.Err())
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	admissions, crds := c.reg.snapshotWithout(skip)
	bundle := c.certs.CABundle()
	if err := c.applyValidating(ctx, admissions, bundle); err != nil {
		return err
	}
	if err := c.applyMutating(ctx, admissions, bundle); err != nil {
		return err
	}
	return c.applyConversions(ctx, crds, bundle)
}

// clientConfig points the API server at path on this server.
func (c *configurer) clientConfig(path string, bundle []byte) admissionregv1.WebhookClientConfig {
	cc := admissionregv1.WebhookClientConfig{CABundle: bundle}
	if c.opts.URL != "" {
		u, _ := url.Parse(c.opts.URL) // checked by Validate
		u.Path = path
		cc.URL = ptr.To(u.String())
		return cc
	}
	cc.Service = &admissionregv1.ServiceReference{Namespace: c.opts.Namespace, Name: c.opts.ServiceName, Path: ptr.To(path), Port: ptr.To(int32(443))}
	return cc
}

func (c *configurer) applyValidating(ctx context.Context, admissions []Admission, bundle []byte) error {
	cfg := admissionregv1.ValidatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "ValidatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: c.opts.ValidatingConfigName},
		Webhooks:   []admissionregv1.ValidatingWebhook{},
	}
	if c.checksConfigMap() {
		cfg.Webhooks = append(cfg.Webhooks, c.configMapWebhook(bundle))
	}
	if c.checksModuleConfigs != nil && c.checksModuleConfigs() {
		cfg.Webhooks = append(cfg.Webhooks, c.moduleConfigWebhook(bundle))
	}
	if c.guardsWrites != nil && c.guardsWrites() {
		cfg.Webhooks = append(cfg.Webhooks, c.writeGuardWebhooks(bundle)...)
	}
	for i := range admissions {
		if admissions[i].Mutating {
			continue
		}
		b := c.withDefaults(admissions[i].Binding)
		cfg.Webhooks = append(cfg.Webhooks, admissionregv1.ValidatingWebhook{
			Name: b.Name, ClientConfig: c.clientConfig(admissionPath(false, b.Name), bundle), Rules: b.Rules,
			FailurePolicy: &b.FailurePolicy, SideEffects: &b.SideEffects, TimeoutSeconds: &b.TimeoutSeconds,
			MatchPolicy: ptr.To(admissionregv1.Equivalent), ObjectSelector: b.ObjectSelector, NamespaceSelector: b.NamespaceSelector,
			MatchConditions: b.MatchConditions, AdmissionReviewVersions: []string{"v1"},
		})
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode ValidatingWebhookConfiguration: %w", err)
	}
	if _, err := c.kube.AdmissionregistrationV1().ValidatingWebhookConfigurations().Patch(ctx, cfg.Name, types.ApplyPatchType, data, applyOptions()); err != nil {
		return fmt.Errorf("apply ValidatingWebhookConfiguration %s: %w", cfg.Name, err)
	}
	return nil
}

func (c *configurer) applyMutating(ctx context.Context, admissions []Admission, bundle []byte) error {
	cfg := admissionregv1.MutatingWebhookConfiguration{
		TypeMeta:   metav1.TypeMeta{APIVersion: "admissionregistration.k8s.io/v1", Kind: "MutatingWebhookConfiguration"},
		ObjectMeta: metav1.ObjectMeta{Name: c.opts.MutatingConfigName},
		Webhooks:   []admissionregv1.MutatingWebhook{},
	}
	for i := range admissions {
		if !admissions[i].Mutating {
			continue
		}
		b := c.withDefaults(admissions[i].Binding)
		cfg.Webhooks = append(cfg.Webhooks, admissionregv1.MutatingWebhook{
			Name: b.Name, ClientConfig: c.clientConfig(admissionPath(true, b.Name), bundle), Rules: b.Rules,
			FailurePolicy: &b.FailurePolicy, SideEffects: &b.SideEffects, TimeoutSeconds: &b.TimeoutSeconds,
			MatchPolicy: ptr.To(admissionregv1.Equivalent), ObjectSelector: b.ObjectSelector, NamespaceSelector: b.NamespaceSelector,
			MatchConditions: b.MatchConditions, AdmissionReviewVersions: []string{"v1"},
			ReinvocationPolicy: ptr.To(admissionregv1.NeverReinvocationPolicy),
		})
	}
	data, err := json.Marshal(cfg)
	if err != nil {
		return fmt.Errorf("encode MutatingWebhookConfiguration: %w", err)
	}
	if _, err := c.kube.AdmissionregistrationV1().MutatingWebhookConfigurations().Patch(ctx, cfg.Name, types.ApplyPatchType, data, applyOptions()); err != nil {
		return fmt.Errorf("apply MutatingWebhookConfiguration %s: %w", cfg.Name, err)
	}
	return nil
}

// withDefaults fills what a binding left to the operator.
func (c *configurer) withDefaults(b hook.AdmissionBinding) hook.AdmissionBinding {
	if b.FailurePolicy == "" {
		b.FailurePolicy = admissionregv1.FailurePolicyType(c.opts.FailurePolicy)
	}
	return b
}

// configMapWebhook checks the operator's one ConfigMap: its namespace by
// selector, its name by a match condition.
func (c *configurer) configMapWebhook(bundle []byte) admissionregv1.ValidatingWebhook {
	policy := admissionregv1.FailurePolicyType(c.opts.ConfigMapFailurePolicy)
	return admissionregv1.ValidatingWebhook{
		Name: configMapWebhookName, ClientConfig: c.clientConfig(configMapPath, bundle),
		Rules: []admissionregv1.RuleWithOperations{{
			Operations: []admissionregv1.OperationType{admissionregv1.Create, admissionregv1.Update},
			Rule:       admissionregv1.Rule{APIGroups: []string{""}, APIVersions: []string{"v1"}, Resources: []string{"configmaps"}, Scope: ptr.To(admissionregv1.NamespacedScope)},
		}},
		FailurePolicy: &policy, SideEffects: ptr.To(admissionregv1.SideEffectClassNone), TimeoutSeconds: ptr.To(int32(5)),
		MatchPolicy:             ptr.To(admissionregv1.Equivalent),
		NamespaceSelector:       &metav1.LabelSelector{MatchLabels: map[string]string{"kubernetes.io/metadata.name": c.opts.Namespace}},
		MatchConditions:         []admissionregv1.MatchCondition{{Name: "operator-configmap", Expression: fmt.Sprintf("object.metadata.name == %q", c.opts.ConfigMapName)}},
		AdmissionReviewVersions: []string{"v1"},
	}
}

// applyOptions force the operator's ownership of what it writes.
func applyOptions() metav1.PatchOptions {
	return metav1.PatchOptions{FieldManager: fieldManager, Force: ptr.To(true)}
}

func (c *configurer) applyConversions(ctx context.Context, crds []string, bundle []byte) error {
	if c.converted == nil {
		c.converted = map[string]bool{}
	}
	for _, crd := range crds {
		conv := apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.WebhookConverter, Webhook: &apiextensionsv1.WebhookConversion{
			ClientConfig:             crdClientConfig(c.clientConfig(conversionPath(crd), bundle)),
			ConversionReviewVersions: []string{"v1"},
		}}
		err := c.applyConversion(ctx, crd, conv)
		switch {
		case apierrors.IsNotFound(err):
			// Created later (by a release); the next resync sets it.
			c.log.Debug("CRD of a conversion binding not found yet", slog.String(logkey.Name, crd))
		case err != nil:
			return err
		default:
			c.converted[crd] = true
		}
	}
	for crd := range c.converted {
		if slices.Contains(crds, crd) {
			continue
		}
		err := c.applyConversion(ctx, crd, apiextensionsv1.CustomResourceConversion{Strategy: apiextensionsv1.NoneConverter})
		if err != nil && !apierrors.IsNotFound(err) {
			return err
		}
		delete(c.converted, crd)
	}
	return nil
}

func (c *configurer) applyConversion(ctx context.Context, crd string, conv apiextensionsv1.CustomResourceConversion) error {
	body := map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": crd}, "spec": map[string]any{"conversion": conv},
	}
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode conversion of CRD %s: %w", crd, err)
	}
	if _, err := c.crds.ApiextensionsV1().CustomResourceDefinitions().Patch(ctx, crd, types.ApplyPatchType, data, applyOptions()); err != nil {
		return fmt.Errorf("set conversion of CRD %s: %w", crd, err)
	}
	return nil
}

func crdClientConfig(cc admissionregv1.WebhookClientConfig) *apiextensionsv1.WebhookClientConfig {
	out := &apiextensionsv1.WebhookClientConfig{URL: cc.URL, CABundle: cc.CABundle}
	if cc.Service != nil {
		out.Service = &apiextensionsv1.ServiceReference{Namespace: cc.Service.Namespace, Name: cc.Service.Name, Path: cc.Service.Path, Port: cc.Service.Port}
	}
	return out
}
