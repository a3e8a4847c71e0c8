package chaos

import "fmt"

// killPoint names what an iteration interrupts.
type killPoint string

const (
	// killInstall: the first install of every release, in a new namespace.
	killInstall killPoint = "first install"
	// killStartupUpgrade: upgrades at startup, after the ConfigMap changed
	// while the operator was down.
	killStartupUpgrade killPoint = "upgrade at startup"
	// killLiveUpgrade: upgrades of a converged operator, caused by a
	// ConfigMap change.
	killLiveUpgrade killPoint = "upgrade while running"
)

// killPoints are visited in turn; an install iteration comes first, since
// it makes the namespace the others work in.
func killPoints() []killPoint {
	return []killPoint{killInstall, killStartupUpgrade, killLiveUpgrade}
}

// operation is the Helm operation a kill point interrupts.
type operation string

func (p killPoint) operation() operation {
	if p == killInstall {
		return "install"
	}
	return "upgrade"
}

// helmSteps are Helm's debug messages at the steps of op, in order; the
// empty one stands for a random moment.
func helmSteps(op operation) []string {
	if op == "install" {
		return []string{
			"",
			"Starting delete for",    // before-hook-creation: the old hook object goes
			"creating 1 resource(s)", // the pre-install hook
			"creating 3 resource(s)", // the release's objects
		}
	}
	return []string{
		"",
		"creating upgraded release for",  // the pending revision is being recorded
		"creating 1 resource(s)",         // the pre-upgrade hook
		"Patch ConfigMap",                // the release's objects are being updated
		"Created a new ConfigMap called", // the object named after the new generation
		"Deleting ConfigMap",             // the previous generation's object
		"updating status for upgraded release for",
	}
}

// trigger is the moment an iteration kills the operator: a few
// milliseconds after a Helm debug line about one module's release, or,
// when msg is empty, after a random delay within the module runs.
type trigger struct {
	msg    string // prefix of the log message
	module string
	// changeWhileDown: the users' ConfigMap changes before the restart, as
	// a user may edit it while the operator crash-loops; the restart then
	// deploys another rendering than the interrupted operation did.
	changeWhileDown bool
}

func (tr trigger) String() string {
	if tr.msg == "" {
		return "a random delay"
	}
	return fmt.Sprintf("%s %q", tr.module, tr.msg)
}

// nextTrigger draws the kill moment for point. A round of the schedule has
// every Helm step of the point's operation twice, with and without a
// ConfigMap change while down, in random order and for random modules;
// upgrade kill points share their rounds, so 14 upgrade iterations cover
// every combination.
func (c *chaos) nextTrigger(point killPoint) trigger {
	op := point.operation()
	if len(c.rounds[op]) == 0 {
		names, steps := moduleNames(), helmSteps(op)
		round := make([]trigger, 0, 2*len(steps))
		for _, msg := range steps {
			for _, change := range []bool{false, true} {
				round = append(round, trigger{msg: msg, module: names[c.rng.IntN(len(names))], changeWhileDown: change})
			}
		}
		c.rng.Shuffle(len(round), func(i, j int) { round[i], round[j] = round[j], round[i] })
		c.rounds[op] = round
	}
	tr := c.rounds[op][0]
	c.rounds[op] = c.rounds[op][1:]
	return tr
}
