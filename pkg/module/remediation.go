package module

// Remediation is a module's own setting for failed releases, read from its
// module.yaml; see the operator's --remediation and --remediation-retries
// for what each field means. A field left zero takes the operator's
// default.
type Remediation struct {
	// Strategy is "none", "rollback" or "uninstall"; empty for the default.
	Strategy string
	// Retries is how many deployments in a row must fail before the
	// release is remediated; 0 for the default.
	Retries int
}

// Remediation returns the module's own remediation setting; the zero
// Remediation when its module.yaml sets none.
func (m *Module) Remediation() Remediation { return m.remediation }
