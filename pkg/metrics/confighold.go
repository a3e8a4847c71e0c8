package metrics

// ConfigHeld sets which reason the last accepted configuration is held
// for: 1 for reason, 0 for every other one of reasons; reason "" says
// nothing is held. Each of reasons is published, so that a held
// configuration is one series changing value, not a series appearing.
func (r *Recorder) ConfigHeld(reason string, reasons []string) {
	for _, each := range reasons {
		v := 0.0
		if each == reason {
			v = 1
		}
		r.configHeld.WithLabelValues(each).Set(v)
	}
}
