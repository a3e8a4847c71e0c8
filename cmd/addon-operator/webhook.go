package main

import (
	"fmt"

	apiextensions "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/webhook"
)

// webhookEnvFallbacks are the environment names of the webhook flags: the
// established ones, the flag names upper-cased.
func webhookEnvFallbacks() map[string][]string {
	return map[string][]string{
		"webhook-server":                        {"ADDON_OPERATOR_WEBHOOK_SERVER"},
		"validating-webhook-listen-address":     {"VALIDATING_WEBHOOK_LISTEN_ADDRESS"},
		"validating-webhook-listen-port":        {"VALIDATING_WEBHOOK_LISTEN_PORT"},
		"validating-webhook-configuration-name": {"VALIDATING_WEBHOOK_CONFIGURATION_NAME"},
		"mutating-webhook-configuration-name":   {"MUTATING_WEBHOOK_CONFIGURATION_NAME"},
		"validating-webhook-service-name":       {"VALIDATING_WEBHOOK_SERVICE_NAME"},
		"conversion-webhook-service-name":       {"CONVERSION_WEBHOOK_SERVICE_NAME"},
		"validating-webhook-server-cert":        {"VALIDATING_WEBHOOK_SERVER_CERT"},
		"validating-webhook-server-key":         {"VALIDATING_WEBHOOK_SERVER_KEY"},
		"validating-webhook-ca":                 {"VALIDATING_WEBHOOK_CA"},
		"validating-webhook-client-ca":          {"VALIDATING_WEBHOOK_CLIENT_CA"},
		"validating-webhook-failure-policy":     {"VALIDATING_WEBHOOK_FAILURE_POLICY"},
		"conversion-webhook-server-cert":        {"CONVERSION_WEBHOOK_SERVER_CERT"},
		"conversion-webhook-server-key":         {"CONVERSION_WEBHOOK_SERVER_KEY"},
		"conversion-webhook-ca":                 {"CONVERSION_WEBHOOK_CA"},
		"conversion-webhook-client-ca":          {"CONVERSION_WEBHOOK_CLIENT_CA"},
		"webhook-url":                           {"ADDON_OPERATOR_WEBHOOK_URL"},
		"webhook-cert-secret":                   {"ADDON_OPERATOR_WEBHOOK_CERT_SECRET"},
		"webhook-cert-validity":                 {"ADDON_OPERATOR_WEBHOOK_CERT_VALIDITY"},
		"webhook-cert-renew-before":             {"ADDON_OPERATOR_WEBHOOK_CERT_RENEW_BEFORE"},
		"webhook-cert-check-interval":           {"ADDON_OPERATOR_WEBHOOK_CERT_CHECK_INTERVAL"},
		"webhook-max-concurrent-runs":           {"ADDON_OPERATOR_WEBHOOK_MAX_CONCURRENT_RUNS"},
		"webhook-max-inflight-bytes":            {"ADDON_OPERATOR_WEBHOOK_MAX_INFLIGHT_BYTES"},
		"webhook-max-connections":               {"ADDON_OPERATOR_WEBHOOK_MAX_CONNECTIONS"},
		"webhook-client-ca":                     {"ADDON_OPERATOR_WEBHOOK_CLIENT_CA"},
		"webhook-client-names":                  {"ADDON_OPERATOR_WEBHOOK_CLIENT_NAMES"},
		"webhook-http2":                         {"ADDON_OPERATOR_WEBHOOK_HTTP2"},
		"config-map-validation":                 {"ADDON_OPERATOR_CONFIG_MAP_VALIDATION"},
		"config-map-validation-failure-policy":  {"ADDON_OPERATOR_CONFIG_MAP_VALIDATION_FAILURE_POLICY"},
	}
}

// webhookConfig is what the operator builds the webhook server from when
// --webhook-server is on; nil otherwise.
func (o *startOptions) webhookConfig(restCfg *rest.Config) (*admission.Config, error) {
	if !o.webhook.Enabled {
		return nil, nil
	}
	kube, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("webhook client: %w", err)
	}
	crds, err := apiextensions.NewForConfig(restCfg)
	if err != nil {
		return nil, fmt.Errorf("webhook apiextensions client: %w", err)
	}
	wo := o.webhook
	wo.Namespace, wo.ConfigMapName = o.operator.Namespace, o.operator.Config.ConfigMap
	return &admission.Config{
		Server: wo, Clients: webhook.Clients{Kube: kube, CRDs: crds}, Redact: o.redactor.String,
		ModuleConfigs: o.api.configSource == configSourceModuleConfig,
	}, nil
}
