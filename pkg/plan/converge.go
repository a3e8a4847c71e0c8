package plan

// Plan is what a converge does to modules and releases.
type Plan struct {
	Decisions []Decision
	// Run lists enabled modules in order; Startup marks those that became
	// enabled (their onStartup hooks run first).
	Run     []string
	Startup map[string]bool
	// Delete lists modules to uninstall, in reverse order.
	Delete []string
	// Purge lists releases the operator owns that have no module.
	Purge []string
}

// Converge compares decisions with what was enabled before and which
// releases exist. A disabled module is deleted when it was enabled before or
// still has a release of ours (disabled while the operator was down).
func Converge(decisions []Decision, wasEnabled map[string]bool, owned []string) Plan {
	p := Plan{Decisions: decisions, Startup: map[string]bool{}}
	known := make(map[string]bool, len(decisions))
	hasRelease := make(map[string]bool, len(owned))
	for _, r := range owned {
		hasRelease[r] = true
	}
	for _, d := range decisions {
		known[d.Name] = true
		switch {
		case d.Enabled:
			p.Run = append(p.Run, d.Name)
			if !wasEnabled[d.Name] {
				p.Startup[d.Name] = true
			}
		case wasEnabled[d.Name] || hasRelease[d.Name]:
			p.Delete = append([]string{d.Name}, p.Delete...)
		}
	}
	for _, r := range owned {
		if !known[r] {
			p.Purge = append(p.Purge, r)
		}
	}
	return p
}

// Foreign returns the releases of unlabeled, releases the operator did not
// create, that are named like no module (isModule): they are left in place
// and reported. A release named like a module is that module's business:
// its run refuses it.
func Foreign(unlabeled []string, isModule func(name string) bool) []string {
	var foreign []string
	for _, name := range unlabeled {
		if !isModule(name) {
			foreign = append(foreign, name)
		}
	}
	return foreign
}
