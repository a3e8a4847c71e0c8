package metrics

// ModuleMaintenance sets whether a module is in maintenance.
func (r *Recorder) ModuleMaintenance(module string, on bool) {
	v := 0.0
	if on {
		v = 1
	}
	r.moduleMaintenance.WithLabelValues(module).Set(v)
}

// Remediation records a remediation of a module's failed release: action
// is rollback or uninstall; err its outcome.
func (r *Recorder) Remediation(module, action string, err error) {
	r.remediations.WithLabelValues(module, action, outcome(err)).Inc()
}
