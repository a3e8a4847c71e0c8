package event

import (
	"slices"
	"sync"
	"time"

	"github.com/addon-operator/addon-operator/pkg/status"
)

// recentPerModule bounds the Events kept per module for Recent.
const recentPerModule = 10

// recentEvents keeps the last Events recorded about each module, newest
// last, at most recentPerModule each; equal consecutive ones are counted.
type recentEvents struct {
	mu   sync.Mutex
	mods map[string][]status.Event
}

func (r *recentEvents) add(module, typ, reason, note string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mods == nil {
		r.mods = map[string][]status.Event{}
	}
	evs := r.mods[module]
	now := time.Now()
	if n := len(evs); n > 0 && evs[n-1].Type == typ && evs[n-1].Reason == reason && evs[n-1].Message == note {
		evs[n-1].Count++
		evs[n-1].Last = now
		return
	}
	evs = append(evs, status.Event{Last: now, Type: typ, Reason: reason, Message: note, Count: 1})
	if over := len(evs) - recentPerModule; over > 0 {
		evs = slices.Delete(evs, 0, over)
	}
	r.mods[module] = evs
}

// Recent returns the last Events this recorder recorded about the module
// since the operator started, newest first, at most 10; their notes are
// redacted as the Events' are.
func (r *Recorder) Recent(module string) []status.Event {
	r.recent.mu.Lock()
	defer r.recent.mu.Unlock()
	out := slices.Clone(r.recent.mods[module])
	slices.Reverse(out)
	return out
}
