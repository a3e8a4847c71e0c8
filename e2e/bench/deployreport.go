package bench

import (
	"fmt"
	"strings"
	"time"
)

// DeployMarkdown renders the Deployment converges: every figure of the
// reference with its ratio to ours beside it.
func DeployMarkdown(runs []DeployResult) string {
	var b strings.Builder
	b.WriteString("| N | pod start delay | first converge: ours | reference v1.5.0 | reference / ours |" +
		" all Deployments available: ours | reference | reference / ours | CPU (operator + hooks): ours | reference | load (1 min) at the starts |\n" +
		"| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	for _, r := range runs {
		o := r.Ours
		if r.Reference == nil {
			fmt.Fprintf(&b, "| %d | %s | %s | not run | | %s | not run | | %s | | %s |\n", r.N, r.Delay,
				formatDuration(o.Converge), formatDuration(o.Available), formatDuration(o.CPU), o.Load)
			continue
		}
		ref := *r.Reference
		fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s, %s |\n", r.N, r.Delay,
			formatDuration(o.Converge), formatDuration(ref.Converge), ratio(ref.Converge, o.Converge),
			formatDuration(o.Available), formatDuration(ref.Available), ratio(ref.Available, o.Available),
			formatDuration(o.CPU), formatDuration(ref.CPU), o.Load, ref.Load)
	}
	return b.String()
}

// ChartsMarkdown renders the charts' start, ours and the reference's.
func ChartsMarkdown(c ChartsResult) string {
	var b strings.Builder
	b.WriteString("| charts | pod start delay | first converge: ours | all Deployments available: ours | reference v1.5.0 | reference / ours |" +
		" CPU (operator + hooks): ours | reference | load (1 min) at the starts |\n" +
		"| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |\n")
	o := c.Ours
	charts := strings.Join(c.Charts, ", ")
	if c.Reference == nil {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | not run | | %s | | %s |\n", charts, c.Delay,
			formatDuration(o.Converge), formatDuration(o.Available), formatDuration(o.CPU), o.Load)
		return b.String()
	}
	ref := *c.Reference
	fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s | %s, %s |\n", charts, c.Delay,
		formatDuration(o.Converge), formatDuration(o.Available), formatDuration(ref.Available), ratio(ref.Available, o.Available),
		formatDuration(o.CPU), formatDuration(ref.CPU), o.Load, ref.Load)
	return b.String()
}

// ratio is ref/ours as "31.1x"; empty when either is missing.
func ratio(ref, ours time.Duration) string {
	if ref <= 0 || ours <= 0 {
		return ""
	}
	return fmt.Sprintf("**%.1fx**", float64(ref)/float64(ours))
}
