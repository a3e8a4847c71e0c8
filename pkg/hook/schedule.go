package hook

import (
	"fmt"
	"maps"
	"slices"

	"github.com/robfig/cron/v3"
)

// ScheduleBinding runs a hook on a crontab schedule. After parsing, Name is
// "schedule" when not given and Queue is "main" when not given.
type ScheduleBinding struct {
	Name string `json:"name"`
	// Crontab has 5 fields, or 6 with leading seconds, or is a descriptor
	// such as "@every 10m"; parse it with CronParser.
	Crontab      string `json:"crontab"`
	AllowFailure bool   `json:"allowFailure"`
	// IncludeSnapshotsFrom is extended, as for kubernetes bindings, with
	// every kubernetes binding of the same group.
	IncludeSnapshotsFrom []string `json:"includeSnapshotsFrom,omitempty"`
	Queue                string   `json:"queue"`
	Group                string   `json:"group,omitempty"`
}

// CronParser returns the parser that accepts exactly the crontabs
// ParseConfig accepts: 5 fields, 6 fields with seconds first, or descriptors.
func CronParser() cron.Parser {
	return cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)
}

func (p *parser) schedule(o *object) ScheduleBinding {
	b := ScheduleBinding{
		Name:                 o.str("name"),
		Crontab:              o.str("crontab"),
		AllowFailure:         o.boolean("allowFailure", false),
		IncludeSnapshotsFrom: o.stringList("includeSnapshotsFrom"),
		Queue:                o.str("queue"),
		Group:                o.str("group"),
	}
	o.done()
	if b.Name == "" {
		b.Name = string(Schedule)
	}
	if b.Queue == "" {
		b.Queue = defaultQueue
	}
	if b.Crontab == "" {
		p.errorf(o.field("crontab"), "required")
		return b
	}
	if _, err := CronParser().Parse(b.Crontab); err != nil {
		p.errorf(o.field("crontab"), "invalid crontab %q: %v", b.Crontab, err)
	}
	return b
}

// checkSnapshots verifies that includeSnapshotsFrom names kubernetes
// bindings of the hook.
func (p *parser) checkSnapshots(cfg *Config) {
	names := make([]string, 0, len(cfg.Kubernetes))
	for i := range cfg.Kubernetes {
		if name := cfg.Kubernetes[i].Name; !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	check := func(path string, include []string) {
		for i, name := range include {
			if slices.Contains(names, name) {
				continue
			}
			want := "the hook has no kubernetes bindings"
			if len(names) > 0 {
				want = "want one of " + quoteList(names)
			}
			p.errorf(itemPath(path, i), "unknown kubernetes binding %q (%s)", name, want)
		}
	}
	for i := range cfg.Kubernetes {
		check(fmt.Sprintf("kubernetes[%d].includeSnapshotsFrom", i), cfg.Kubernetes[i].IncludeSnapshotsFrom)
	}
	for i, s := range cfg.Schedules {
		check(fmt.Sprintf("schedule[%d].includeSnapshotsFrom", i), s.IncludeSnapshotsFrom)
	}
	paths := cfg.webhookSnapshotPaths()
	for _, path := range slices.Sorted(maps.Keys(paths)) {
		check(path, paths[path])
	}
}

// expandGroups adds every kubernetes binding of a group to the snapshots of
// each binding in that group, keeping the configured names first.
func expandGroups(cfg *Config) {
	groups := map[string][]string{}
	for i := range cfg.Kubernetes {
		if k := &cfg.Kubernetes[i]; k.Group != "" {
			groups[k.Group] = append(groups[k.Group], k.Name)
		}
	}
	for i := range cfg.Kubernetes {
		k := &cfg.Kubernetes[i]
		k.IncludeSnapshotsFrom = mergeNames(k.IncludeSnapshotsFrom, groups[k.Group])
	}
	for i := range cfg.Schedules {
		s := &cfg.Schedules[i]
		s.IncludeSnapshotsFrom = mergeNames(s.IncludeSnapshotsFrom, groups[s.Group])
	}
	expandWebhookGroups(cfg, groups)
}

// mergeNames appends to a the names of b it lacks, dropping duplicates.
func mergeNames(a, b []string) []string {
	var out []string
	for _, n := range slices.Concat(a, b) {
		if !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	return out
}
