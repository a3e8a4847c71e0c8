package webhook

import (
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/spf13/pflag"
	admissionv1 "k8s.io/api/admissionregistration/v1"

	"github.com/addon-operator/addon-operator/pkg/webhook/cert"
)

// Options configure the webhook server, its certificates and the
// configurations it owns. Defaults come from DefaultOptions, flags from
// BindFlags; environment fallbacks are applied by the command.
type Options struct {
	// Enabled turns the server on. Without it webhook bindings are parsed
	// but not served (the operator warns once per hook), and the ConfigMap is
	// not checked at admission. Off by default: serving needs a Service and
	// RBAC for the configurations, which the chart provides and turns it on.
	Enabled bool
	// ListenAddress and ListenPort are where the HTTPS server listens.
	ListenAddress string
	ListenPort    int
	// ValidatingConfigName and MutatingConfigName name the two
	// configurations the operator owns.
	ValidatingConfigName string
	MutatingConfigName   string
	// ServiceName is the Service in front of the replicas, in Namespace;
	// the configurations point at it unless URL is set.
	ServiceName string
	// URL, when set, is the base address the API server calls instead of
	// the Service (for example https://127.0.0.1:9680).
	URL string
	// ServerCert, ServerKey and CA are files with the serving certificate,
	// its key and the CA bundle; when empty the operator issues its own
	// and keeps them in CertSecret.
	ServerCert, ServerKey, CA string
	// ClientCA, when set, is a file of CAs: admission requests must present
	// a client certificate they signed (conversion requests, for which the
	// API server has no certificate, are served apart). ClientNames, when
	// set, are the common or DNS names such a certificate must carry one of.
	ClientCA    string
	ClientNames []string
	// FailurePolicy is the failure policy of admission bindings that set
	// none.
	FailurePolicy string
	// CertSecret names the Secret with the issued CA and certificate.
	CertSecret string
	// CertValidity is how long an issued certificate is valid, counted from
	// an hour before it is issued (to absorb clock skew).
	CertValidity time.Duration
	// CertRenewBefore is how long before expiry a certificate is renewed.
	CertRenewBefore time.Duration
	// CertCheckInterval is how often the certificate files or Secret are
	// read again, and the configurations re-asserted.
	CertCheckInterval time.Duration
	// MaxConcurrentRuns bounds webhook hook runs in progress at once.
	MaxConcurrentRuns int
	// MaxInflightBytes bounds the request bodies in flight at once; at least
	// one review's bound (7 MiB).
	MaxInflightBytes int64
	// MaxConnections bounds the connections the server holds open at once.
	MaxConnections int
	// HTTP2 offers HTTP/2 besides HTTP/1.1. Off by default: the API server
	// is the only client and gains nothing from it, HTTP/2 servers have had
	// denial-of-service flaws of their own (stream reset and CONTINUATION
	// floods), and each request costs the operator about 15 % more CPU.
	HTTP2 bool
	// ConfigMapValidation registers a webhook that checks the operator's
	// ConfigMap before it is stored; ConfigMapFailurePolicy is its policy.
	ConfigMapValidation    bool
	ConfigMapFailurePolicy string
	// Namespace is the operator's namespace (of the Service, the Secret
	// and the ConfigMap) and ConfigMapName its ConfigMap; both set by the
	// command from the operator's options.
	Namespace     string
	ConfigMapName string
}

// DefaultOptions returns the defaults documented in --help.
func DefaultOptions() Options {
	return Options{
		ListenAddress:          "0.0.0.0",
		ListenPort:             9680,
		ValidatingConfigName:   "addon-operator-hooks",
		MutatingConfigName:     "addon-operator-hooks",
		ServiceName:            "addon-operator-webhook",
		CertSecret:             "addon-operator-webhook-tls",
		CertValidity:           365 * 24 * time.Hour,
		CertRenewBefore:        30 * 24 * time.Hour,
		CertCheckInterval:      time.Minute,
		MaxConcurrentRuns:      16,
		MaxInflightBytes:       32 << 20,
		MaxConnections:         1024,
		FailurePolicy:          string(admissionv1.Fail),
		ConfigMapValidation:    true,
		ConfigMapFailurePolicy: string(admissionv1.Ignore),
	}
}

// BindFlags registers a flag for every option. The established
// --validating-webhook-* and --conversion-webhook-* names are kept; one
// server serves both, so the conversion flags set the same options.
func (o *Options) BindFlags(fs *pflag.FlagSet) {
	fs.BoolVar(&o.Enabled, "webhook-server", o.Enabled,
		"serve hooks' admission and conversion webhooks and check the ConfigMap at admission; the chart turns it on (env ADDON_OPERATOR_WEBHOOK_SERVER)")
	fs.StringVar(&o.ListenAddress, "validating-webhook-listen-address", o.ListenAddress,
		"address of the HTTPS webhook server (env VALIDATING_WEBHOOK_LISTEN_ADDRESS)")
	fs.IntVar(&o.ListenPort, "validating-webhook-listen-port", o.ListenPort,
		"port of the HTTPS webhook server (env VALIDATING_WEBHOOK_LISTEN_PORT)")
	fs.StringVar(&o.ValidatingConfigName, "validating-webhook-configuration-name", o.ValidatingConfigName,
		"name of the ValidatingWebhookConfiguration the operator owns (env VALIDATING_WEBHOOK_CONFIGURATION_NAME)")
	fs.StringVar(&o.MutatingConfigName, "mutating-webhook-configuration-name", o.MutatingConfigName,
		"name of the MutatingWebhookConfiguration the operator owns (env MUTATING_WEBHOOK_CONFIGURATION_NAME)")
	fs.StringVar(&o.ServiceName, "validating-webhook-service-name", o.ServiceName,
		"Service in the operator's namespace the API server calls for webhooks (env VALIDATING_WEBHOOK_SERVICE_NAME)")
	fs.StringVar(&o.ServiceName, "conversion-webhook-service-name", o.ServiceName,
		"same as --validating-webhook-service-name: one server serves both (env CONVERSION_WEBHOOK_SERVICE_NAME)")
	fs.StringVar(&o.URL, "webhook-url", o.URL,
		"base URL the API server calls instead of the Service, e.g. https://127.0.0.1:9680 (env ADDON_OPERATOR_WEBHOOK_URL)")
	for _, prefix := range []string{"validating", "conversion"} {
		env := map[string]string{"validating": "VALIDATING", "conversion": "CONVERSION"}[prefix]
		same := ""
		if prefix == "conversion" {
			same = "; the same file as the validating-webhook flag"
		}
		fs.StringVar(&o.ServerCert, prefix+"-webhook-server-cert", o.ServerCert,
			"file with the webhook server's certificate; the operator issues its own when empty"+same+" (env "+env+"_WEBHOOK_SERVER_CERT)")
		fs.StringVar(&o.ServerKey, prefix+"-webhook-server-key", o.ServerKey,
			"file with the webhook server certificate's key"+same+" (env "+env+"_WEBHOOK_SERVER_KEY)")
		fs.StringVar(&o.CA, prefix+"-webhook-ca", o.CA,
			"file with the CA bundle put into the webhook configurations"+same+" (env "+env+"_WEBHOOK_CA)")
		fs.StringVar(&o.ClientCA, prefix+"-webhook-client-ca", o.ClientCA,
			"same as --webhook-client-ca (env "+env+"_WEBHOOK_CLIENT_CA)")
	}
	fs.StringVar(&o.ClientCA, "webhook-client-ca", o.ClientCA,
		"file with CAs that must have signed the API server's client certificate on admission requests (configure its AdmissionConfiguration to present one); "+
			"none required when empty (env ADDON_OPERATOR_WEBHOOK_CLIENT_CA)")
	fs.StringSliceVar(&o.ClientNames, "webhook-client-names", o.ClientNames,
		"with --webhook-client-ca: common or DNS names of which the client certificate must carry one; any when empty (env ADDON_OPERATOR_WEBHOOK_CLIENT_NAMES)")
	fs.StringVar(&o.FailurePolicy, "validating-webhook-failure-policy", o.FailurePolicy,
		"Fail or Ignore: the failurePolicy of admission bindings that set none (env VALIDATING_WEBHOOK_FAILURE_POLICY)")
	fs.StringVar(&o.CertSecret, "webhook-cert-secret", o.CertSecret,
		"Secret in the operator's namespace that keeps the issued CA and serving certificate, shared by all replicas (env ADDON_OPERATOR_WEBHOOK_CERT_SECRET)")
	fs.DurationVar(&o.CertValidity, "webhook-cert-validity", o.CertValidity,
		"validity of an issued certificate, counted from an hour before it is issued (env ADDON_OPERATOR_WEBHOOK_CERT_VALIDITY)")
	fs.DurationVar(&o.CertRenewBefore, "webhook-cert-renew-before", o.CertRenewBefore,
		"renew an issued certificate this long before it expires (env ADDON_OPERATOR_WEBHOOK_CERT_RENEW_BEFORE)")
	fs.DurationVar(&o.CertCheckInterval, "webhook-cert-check-interval", o.CertCheckInterval,
		"how often certificates are read again and the webhook configurations re-asserted (env ADDON_OPERATOR_WEBHOOK_CERT_CHECK_INTERVAL)")
	fs.IntVar(&o.MaxConcurrentRuns, "webhook-max-concurrent-runs", o.MaxConcurrentRuns,
		"webhook hook runs in progress at once; more requests wait within their timeout (env ADDON_OPERATOR_WEBHOOK_MAX_CONCURRENT_RUNS)")
	fs.Int64Var(&o.MaxInflightBytes, "webhook-max-inflight-bytes", o.MaxInflightBytes,
		"request bodies in flight at once, in bytes (each counts at least 16 KiB, at most 7 MiB); more requests wait a second, then get 429 (env ADDON_OPERATOR_WEBHOOK_MAX_INFLIGHT_BYTES)")
	fs.IntVar(&o.MaxConnections, "webhook-max-connections", o.MaxConnections,
		"connections the webhook server holds open at once; more wait to be accepted (env ADDON_OPERATOR_WEBHOOK_MAX_CONNECTIONS)")
	fs.BoolVar(&o.HTTP2, "webhook-http2", o.HTTP2,
		"offer HTTP/2 to the API server besides HTTP/1.1 (env ADDON_OPERATOR_WEBHOOK_HTTP2)")
	fs.BoolVar(&o.ConfigMapValidation, "config-map-validation", o.ConfigMapValidation,
		"check the operator's ConfigMap at admission, so that invalid content is never stored (env ADDON_OPERATOR_CONFIG_MAP_VALIDATION)")
	fs.StringVar(&o.ConfigMapFailurePolicy, "config-map-validation-failure-policy", o.ConfigMapFailurePolicy,
		"Ignore or Fail: what the API server does with a ConfigMap write when the operator does not answer (env ADDON_OPERATOR_CONFIG_MAP_VALIDATION_FAILURE_POLICY)")
}

// Validate reports options that cannot work.
func (o *Options) Validate() error {
	if !o.Enabled {
		return nil
	}
	var errs []error
	if o.ListenPort < 1 || o.ListenPort > 65535 {
		errs = append(errs, fmt.Errorf("--validating-webhook-listen-port %d out of range", o.ListenPort))
	}
	if o.ValidatingConfigName == "" || o.MutatingConfigName == "" {
		errs = append(errs, errors.New("--validating-webhook-configuration-name and --mutating-webhook-configuration-name must not be empty"))
	}
	if o.URL == "" && o.ServiceName == "" {
		errs = append(errs, errors.New("--validating-webhook-service-name or --webhook-url is required"))
	}
	if o.URL != "" {
		u, err := url.Parse(o.URL)
		if err != nil || u.Scheme != "https" || u.Host == "" {
			errs = append(errs, fmt.Errorf("--webhook-url %q: want https://host[:port]", o.URL))
		}
	}
	if (o.ServerCert == "") != (o.ServerKey == "") {
		errs = append(errs, errors.New("--validating-webhook-server-cert and --validating-webhook-server-key go together"))
	}
	if o.ServerCert == "" && o.CertSecret == "" {
		errs = append(errs, errors.New("--webhook-cert-secret is required when no certificate files are given"))
	}
	if o.CertRenewBefore <= 0 || o.CertValidity <= o.CertRenewBefore+time.Hour {
		errs = append(errs, fmt.Errorf("--webhook-cert-validity %s must exceed --webhook-cert-renew-before %s by more than an hour", o.CertValidity, o.CertRenewBefore))
	}
	if o.CertCheckInterval <= 0 {
		errs = append(errs, fmt.Errorf("--webhook-cert-check-interval must be positive, got %s", o.CertCheckInterval))
	}
	if o.MaxConcurrentRuns < 1 {
		errs = append(errs, fmt.Errorf("--webhook-max-concurrent-runs must be at least 1, got %d", o.MaxConcurrentRuns))
	}
	if o.MaxInflightBytes < maxReviewBytes {
		errs = append(errs, fmt.Errorf("--webhook-max-inflight-bytes must be at least %d (one review), got %d", maxReviewBytes, o.MaxInflightBytes))
	}
	if o.MaxConnections < 1 {
		errs = append(errs, fmt.Errorf("--webhook-max-connections must be at least 1, got %d", o.MaxConnections))
	}
	if len(o.ClientNames) > 0 && o.ClientCA == "" {
		errs = append(errs, errors.New("--webhook-client-names needs --webhook-client-ca"))
	}
	switch admissionv1.FailurePolicyType(o.FailurePolicy) {
	case admissionv1.Ignore, admissionv1.Fail:
	default:
		errs = append(errs, fmt.Errorf("--validating-webhook-failure-policy must be Ignore or Fail, got %q", o.FailurePolicy))
	}
	switch admissionv1.FailurePolicyType(o.ConfigMapFailurePolicy) {
	case admissionv1.Ignore, admissionv1.Fail:
	default:
		errs = append(errs, fmt.Errorf("--config-map-validation-failure-policy must be Ignore or Fail, got %q", o.ConfigMapFailurePolicy))
	}
	return errors.Join(errs...)
}

// certOptions are the certificate's part of o.
func (o Options) certOptions() cert.Options {
	return cert.Options{
		Namespace: o.Namespace, ServiceName: o.ServiceName, URL: o.URL,
		ServerCert: o.ServerCert, ServerKey: o.ServerKey, CA: o.CA, Secret: o.CertSecret,
		Validity: o.CertValidity, RenewBefore: o.CertRenewBefore, CheckInterval: o.CertCheckInterval,
	}
}
