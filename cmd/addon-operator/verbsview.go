package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/utils/clock"

	v1 "github.com/addon-operator/addon-operator/pkg/apis/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/helm"
	"github.com/addon-operator/addon-operator/pkg/helm/revisions"
	"github.com/addon-operator/addon-operator/pkg/kube/readiness"
)

// verbCommand is "VERB module NAME...": the shape of flux's verbs, with
// one kind.
func verbCommand(verb, short string, sub *cobra.Command) *cobra.Command {
	cmd := &cobra.Command{Use: verb, Short: short}
	cmd.AddCommand(sub)
	return cmd
}

// releaseNamespace is the namespace of a module's release objects: its
// Module object's, else the operator's.
func (c *moduleClient) releaseNamespace(ctx context.Context, name string) string {
	if m, err := c.module(ctx, name); err == nil && m.Status.Release != nil && m.Status.Release.Namespace != "" {
		return m.Status.Release.Namespace
	}
	return c.namespace
}

// treeNodes reads a module's release manifest and every object's kstatus.
func treeNodes(ctx context.Context, c *moduleClient, view *clusterView, name string) ([]readiness.Node, error) {
	manifest, err := view.releases.Manifest(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("module %q: %w", name, err)
	}
	objs, err := readiness.ObjectsFromManifest(manifest, false)
	if err != nil {
		return nil, fmt.Errorf("module %q: release manifest: %w", name, err)
	}
	checker := readiness.NewChecker(view.objects.Dynamic, view.objects.Kinds, clock.RealClock{})
	return checker.Statuses(ctx, c.releaseNamespace(ctx, name), objs)
}

func newTreeCommand() *cobra.Command {
	o := &verbOptions{}
	sub := &cobra.Command{
		Use:   "module NAME",
		Short: "List a module's release objects with their kstatus status",
		Long: `List the objects of the module's release, as its last revision's manifest
names them, with kind, namespace, name and their kstatus status (Current,
InProgress, Failed, Terminating, NotFound; Unknown with the reason when an
object cannot be read). Needs "get" on the release's Secrets in the
operator's namespace and on the objects.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			view, err := o.kube.view(newWarnLogger(cmd.ErrOrStderr()))
			if err != nil {
				return err
			}
			nodes, err := treeNodes(cmd.Context(), c, view, args[0])
			if err != nil {
				return err
			}
			return writeOutput(cmd.OutOrStdout(), o.output, nodes, func(w io.Writer) error { return printTree(w, args[0], nodes) })
		},
	}
	o.bind(sub)
	return verbCommand("tree", "List a module's objects, as flux tree does", sub)
}

func printTree(w io.Writer, name string, nodes []readiness.Node) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Module/%s\n", name)
	for i, n := range nodes {
		branch := "├── "
		if i == len(nodes)-1 {
			branch = "└── "
		}
		ref := n.Kind + "/" + n.Name
		if n.Namespace != "" {
			ref = n.Kind + "/" + n.Namespace + "/" + n.Name
		}
		msg := ""
		if n.Message != "" {
			msg = "\t" + n.Message
		}
		fmt.Fprintf(tw, "%s%s\t%s%s\n", branch, ref, n.Status, msg)
	}
	return tw.Flush()
}

func newHistoryCommand() *cobra.Command {
	o := &verbOptions{}
	sub := &cobra.Command{
		Use:   "module NAME",
		Short: "List a module's release revisions",
		Long: `List the revisions of the module's Helm release, oldest first, as helm
history does: time, status, reason (install, upgrade, values change,
rollback), chart, how long the revision took to deploy (in whole seconds;
"-" while unknown), the checksum of its values and Helm's description.
Needs "list" and "get" on Secrets in the operator's namespace.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, err := o.client(cmd); err != nil {
				return err
			}
			view, err := o.kube.view(newWarnLogger(cmd.ErrOrStderr()))
			if err != nil {
				return err
			}
			revs, err := view.releases.History(cmd.Context(), args[0])
			if err != nil {
				return fmt.Errorf("module %q: %w", args[0], err)
			}
			return writeOutput(cmd.OutOrStdout(), o.output, revs, func(w io.Writer) error { return printHistory(w, revs) })
		},
	}
	o.bind(sub)
	return verbCommand("history", "List a module's release revisions, as helm history does", sub)
}

func printHistory(w io.Writer, revs []revisions.Revision) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "REVISION\tUPDATED\tSTATUS\tREASON\tCHART\tDURATION\tVALUES\tDESCRIPTION")
	for i := range revs {
		r := &revs[i]
		dur := "-"
		if r.Duration > 0 || (r.Status != "" && !strings.HasPrefix(r.Status, "pending")) {
			dur = r.Duration.String()
		}
		sum := r.ValuesChecksum
		if len(sum) > 12 {
			sum = sum[:12]
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Revision, r.Updated.UTC().Format(time.RFC3339), r.Status, r.Reason,
			r.Chart, dur, sum, r.Description)
	}
	return tw.Flush()
}

func newRollbackCommand() *cobra.Command {
	o := &verbOptions{}
	var suspend bool
	var timeout time.Duration
	sub := &cobra.Command{
		Use:   "module NAME [REVISION]",
		Short: "Roll a suspended module's release back to an earlier revision",
		Long: `Roll the module's Helm release back, as helm rollback does: a new revision
with the chart and values of REVISION (default: the one before the last),
described "Rollback to N" and shown by history.

The operator keeps every enabled module at its desired state: at the
module's next run (any change of its values, a restart, a reconcile) it
upgrades the release again. A rollback therefore only lasts while the
module is suspended (in maintenance), and the command refuses a module
that is not: give --suspend to suspend it first (it then waits until the
operator shows it in maintenance, so that no run of its races the
rollback). "resume module NAME" ends it, and the release is upgraded to
the desired state again. Needs what suspend needs, "get" on modules, and
Helm's rights on the release: its Secrets and its objects.`,
		Args: cobra.RangeArgs(1, 2),
		RunE: func(cmd *cobra.Command, args []string) error {
			revision := 0
			if len(args) == 2 {
				n, err := strconv.Atoi(args[1])
				if err != nil || n < 1 {
					return fmt.Errorf("REVISION %q: want a revision number", args[1])
				}
				revision = n
			}
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			return c.rollback(cmd, o, args[0], revision, suspend, timeout)
		},
	}
	o.bind(sub)
	sub.Flags().BoolVar(&suspend, "suspend", false, "suspend the module first (put it in maintenance), so that the operator keeps the rolled-back release")
	sub.Flags().DurationVar(&timeout, "timeout", 5*time.Minute, "how long --suspend waits for the operator to show the module in maintenance")
	return verbCommand("rollback", "Roll a module's release back, as helm rollback does", sub)
}

func (c *moduleClient) rollback(cmd *cobra.Command, o *verbOptions, name string, revision int, suspend bool, timeout time.Duration) error {
	ctx := cmd.Context()
	m, err := c.module(ctx, name)
	if err != nil {
		return err
	}
	if m.Status.Phase != v1.PhaseMaintenance {
		if !suspend {
			return fmt.Errorf("module %q is %s: %w; the operator would upgrade the release again at the module's next run. "+
				"Give --suspend to suspend it first, or run \"addon-operator suspend module %s\"", name, cmp.Or(m.Status.Phase, "unknown"), errNotSuspended, name)
		}
		if err := c.setMaintenance(ctx, name, true); err != nil {
			return err
		}
		fmt.Fprintf(cmd.ErrOrStderr(), "module %s: suspended; waiting for the operator to show it in maintenance\n", name)
		if _, err := c.waitModule(ctx, name, timeout, func(m *v1.Module) bool { return m.Status.Phase == v1.PhaseMaintenance }); err != nil {
			return fmt.Errorf("module %q: not in maintenance within %s (is the operator running?): %w", name, timeout, err)
		}
	}
	view, err := o.kube.view(newWarnLogger(cmd.ErrOrStderr()))
	if err != nil {
		return err
	}
	rev, err := view.releases.Rollback(ctx, name, revision)
	if err != nil {
		return fmt.Errorf("module %q: %w", name, err)
	}
	msg := fmt.Sprintf("rolled back: revision %d (%s); the module stays suspended, \"addon-operator resume module %s\" upgrades it to the desired state again",
		rev.Revision, rev.Description, name)
	return printOutcome(cmd, o.output, outcome{Module: name, Action: "rollback", Phase: v1.PhaseMaintenance, Revision: rev.Revision, Message: msg})
}

// moduleEvent is one Event about a module or one of its release objects.
type moduleEvent struct {
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Reason  string    `json:"reason"`
	Object  string    `json:"object"`
	Message string    `json:"message"`
	Count   int32     `json:"count,omitempty"`
}

func newEventsCommand() *cobra.Command {
	o := &verbOptions{}
	var objects, follow bool
	sub := &cobra.Command{
		Use:   "module NAME",
		Short: "List a module's Events in time order",
		Long: `List the Events about the module's Module object (which the API server keeps
in the "default" namespace, as for every cluster-scoped object) and, with
--objects (the default), about its release's objects, oldest first, as
flux events does. With --watch it then prints each Event that is recorded
or repeated afterwards, as kubectl get events --watch does, until it is
interrupted. Needs "list" (and for --watch "watch") on events in "default"
and, for --objects, in the release's namespace, and what tree needs to
read the release.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := o.client(cmd)
			if err != nil {
				return err
			}
			ctx := cmd.Context()
			if follow {
				var stop context.CancelFunc
				ctx, stop = signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
				defer stop()
			}
			warn := objectsWarning(cmd.ErrOrStderr(), args[0])
			evs, state, err := listStreams(ctx, c.eventStreams(ctx, o, args[0], objects, cmd.ErrOrStderr()), warn)
			if err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if !follow {
				return writeOutput(w, o.output, evs, func(w io.Writer) error { return printEvents(w, evs) })
			}
			return watchEvents(ctx, w, o.output, evs, state)
		},
	}
	o.bind(sub)
	sub.Flags().BoolVar(&objects, "objects", true, "also list the Events about the module's release objects")
	sub.Flags().BoolVarP(&follow, "watch", "w", false, "after listing, print new and repeated Events until interrupted")
	return verbCommand("events", "List a module's Events, as flux events does", sub)
}

// watchEvents prints the listed Events, then each one followed, until ctx
// ends: text as a table whose rows follow one by one, other formats one
// document per Event.
func watchEvents(ctx context.Context, w io.Writer, format string, evs []moduleEvent, state []listed) error {
	emit := func(e moduleEvent) error { return writeOutput(w, format, e, nil) }
	if format == "text" {
		if err := printEvents(w, evs); err != nil {
			return err
		}
		emit = func(e moduleEvent) error { return printEventRow(w, e) }
	} else {
		for _, e := range evs {
			if err := emit(e); err != nil {
				return err
			}
		}
	}
	return followStreams(ctx, state, emit)
}

// objectsWarning reports to stderr why the Events of a module's objects
// are left out.
func objectsWarning(stderr io.Writer, name string) func(error) {
	return func(err error) {
		fmt.Fprintf(stderr, "warning: the Events of module %s's objects are not listed: %v\n", name, err)
	}
}

// eventStreams are where a module's Events are: its Module object's in
// "default", then, with objects, its release objects' by namespace. What
// keeps the objects' streams from being known (no right to read the
// release) is reported to stderr.
func (c *moduleClient) eventStreams(ctx context.Context, o *verbOptions, name string, objects bool, stderr io.Writer) []eventStream {
	streams := []eventStream{{
		client: c.core, namespace: metav1.NamespaceDefault, what: fmt.Sprintf("module %q", name),
		fieldSelector: fields.Set{"involvedObject.kind": "Module", "involvedObject.name": name}.String(),
	}}
	if !objects {
		return streams
	}
	byNS, err := c.objectsByNamespace(ctx, o, name, stderr)
	if err != nil {
		objectsWarning(stderr, name)(err)
	}
	for _, ns := range slices.Sorted(maps.Keys(byNS)) {
		names := byNS[ns]
		streams = append(streams, eventStream{
			client: c.core, namespace: ns, what: fmt.Sprintf("module %q's objects", name),
			keep: func(ev *corev1.Event) bool { return names[ev.InvolvedObject.Kind+"/"+ev.InvolvedObject.Name] },
		})
	}
	return streams
}

// objectsByNamespace returns a module's release objects as kind/name by
// namespace; none when the module has no release.
func (c *moduleClient) objectsByNamespace(ctx context.Context, o *verbOptions, name string, stderr io.Writer) (map[string]map[string]bool, error) {
	view, err := o.kube.view(newWarnLogger(stderr))
	if err != nil {
		return nil, err
	}
	manifest, err := view.releases.Manifest(ctx, name)
	if errors.Is(err, helm.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	objs, err := readiness.ObjectsFromManifest(manifest, false)
	if err != nil {
		return nil, err
	}
	def := c.releaseNamespace(ctx, name)
	byNS := map[string]map[string]bool{} // namespace -> kind/name
	for _, obj := range objs {
		ns := cmp.Or(obj.Namespace, def)
		if byNS[ns] == nil {
			byNS[ns] = map[string]bool{}
		}
		byNS[ns][obj.Kind+"/"+obj.Name] = true
	}
	return byNS, nil
}

func eventOf(ev *corev1.Event) moduleEvent {
	t := ev.LastTimestamp.Time
	if ev.Series != nil && !ev.Series.LastObservedTime.IsZero() {
		t = ev.Series.LastObservedTime.Time
	}
	if t.IsZero() {
		t = ev.EventTime.Time
	}
	if t.IsZero() {
		t = ev.CreationTimestamp.Time
	}
	obj := ev.InvolvedObject.Kind + "/" + ev.InvolvedObject.Name
	if ev.InvolvedObject.Namespace != "" {
		obj = ev.InvolvedObject.Kind + "/" + ev.InvolvedObject.Namespace + "/" + ev.InvolvedObject.Name
	}
	count := ev.Count
	if ev.Series != nil {
		count = ev.Series.Count
	}
	return moduleEvent{Time: t.UTC(), Type: ev.Type, Reason: ev.Reason, Object: obj, Message: strings.TrimSpace(ev.Message), Count: count}
}

func printEvents(w io.Writer, evs []moduleEvent) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tTYPE\tREASON\tOBJECT\tMESSAGE")
	for _, e := range evs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", e.Time.Format(time.RFC3339), e.Type, e.Reason, e.Object, e.Message)
	}
	return tw.Flush()
}

// printEventRow prints one Event as a row of printEvents' table, flushed
// at once: rows that follow cannot be aligned with rows to come.
func printEventRow(w io.Writer, e moduleEvent) error {
	_, err := fmt.Fprintf(w, "%s  %s  %s  %s  %s\n", e.Time.Format(time.RFC3339), e.Type, e.Reason, e.Object, e.Message)
	return err
}
