package webhook

// Checks are what the operator checks at admission, given to New: the
// server answers its own webhooks with them. A nil check's webhook is not
// registered, and its path answers 503.
type Checks struct {
	// ConfigMap checks the operator's ConfigMap (with
	// --config-map-validation).
	ConfigMap ConfigMapCheck
	// ModuleConfig checks ModuleConfig objects (with
	// --config-map-validation, when the configuration comes from them).
	ModuleConfig ModuleConfigCheck
	// WriteGuard guards writes to the configuration by writer and by what
	// they disable.
	WriteGuard *WriteGuard
	// Redact (*redact.Redactor.String) takes secret values out of every
	// answer's message and warnings: a hook's or a check's refusal may
	// quote a Secret's value, and the API server shows it to whoever
	// wrote the object. Nil sends answers as they are.
	Redact func(string) string
}
