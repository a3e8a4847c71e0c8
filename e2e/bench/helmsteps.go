package bench

import (
	"strings"
	"time"
)

// helmSteps splits Helm applies, read from the Helm client's debug lines,
// into the part before the first write to the cluster (rendering, server
// discovery, building and validating objects, reading release records)
// and the writes. The write lines are Helm's own messages.
type helmSteps struct {
	writeStart map[string]time.Time // release -> first write line of the apply in progress
}

// helmApply is one finished Helm apply.
type helmApply struct {
	release string
	// total is the apply's duration; prep the part before the first write
	// (all of it when nothing was written).
	total, prep time.Duration
}

// add takes one log line and returns the apply it finishes, if any.
func (h *helmSteps) add(e Entry) (helmApply, bool) {
	msg, rel := e.Msg(), e.Str("release")
	if isHelmWrite(msg) && rel != "" {
		if h.writeStart == nil {
			h.writeStart = map[string]time.Time{}
		}
		if _, ok := h.writeStart[rel]; !ok {
			h.writeStart[rel] = e.Time()
		}
		return helmApply{}, false
	}
	d, ok := e.Duration("duration")
	if !ok || (msg != msgDeployed && msg != msgUpToDate) {
		return helmApply{}, false
	}
	a := helmApply{release: rel, total: d, prep: d}
	if ws, ok := h.writeStart[rel]; ok {
		a.prep = ws.Sub(e.Time().Add(-d))
		delete(h.writeStart, rel)
	}
	return a, true
}

// isHelmWrite matches Helm's lines just before an install creates objects
// ("creating 4 resource(s)") and an upgrade applies them ("checking 4
// resources for changes").
func isHelmWrite(msg string) bool {
	return (strings.HasPrefix(msg, "creating ") && strings.HasSuffix(msg, " resource(s)")) ||
		(strings.HasPrefix(msg, "checking ") && strings.HasSuffix(msg, " resources for changes"))
}
