package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/pflag"
	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/addon-operator/addon-operator/pkg/config/guard"
	"github.com/addon-operator/addon-operator/pkg/kube/event"
	"github.com/addon-operator/addon-operator/pkg/logkey"
	"github.com/addon-operator/addon-operator/pkg/metrics"
	"github.com/addon-operator/addon-operator/pkg/module"
	"github.com/addon-operator/addon-operator/pkg/operator"
	"github.com/addon-operator/addon-operator/pkg/operator/admission"
	"github.com/addon-operator/addon-operator/pkg/webhook"
)

// selfReviewTimeout bounds the one request that asks the API server who
// the operator is.
const selfReviewTimeout = 10 * time.Second

// moduleGuardOptions are the flags of the guard of writes to modules'
// settings.
type moduleGuardOptions struct {
	// writersFile maps modules to the groups and users that may write
	// their settings; "" restricts nobody.
	writersFile string
}

func (o *moduleGuardOptions) bindFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.writersFile, "module-writers", o.writersFile,
		"YAML file mapping module names (\"global\" for the global settings, \"*\" for every other) to the groups and users "+
			"that may write their settings, checked at admission for ModuleConfigs and the ConfigMap's keys; needs --webhook-server; "+
			"empty: everyone RBAC lets write (env ADDON_OPERATOR_MODULE_WRITERS)")
}

// moduleGuardEnvFallbacks are the environment names of the guard's flags.
func moduleGuardEnvFallbacks() map[string][]string {
	return map[string][]string{"module-writers": {"ADDON_OPERATOR_MODULE_WRITERS"}}
}

// writeGuard returns what builds the guard of writes to the
// configuration for the modules discovered, when there is something to
// guard: a writers file, or a module whose module.yaml asks for a
// confirmation before it is disabled. The writers file must be valid; the
// operator does not start otherwise. ctx bounds the one request that asks
// who the operator is; the returned func is called once, while the
// operator is built.
func (o *moduleGuardOptions) writeGuard(ctx context.Context, webhooks bool, restCfg *rest.Config, log *slog.Logger) (func(*module.Set) (*webhook.WriteGuard, error), error) {
	if o.writersFile != "" && !webhooks {
		return nil, errors.New("--module-writers needs --webhook-server: writers are checked at admission")
	}
	if !webhooks {
		return nil, nil
	}
	return func(mods *module.Set) (*webhook.WriteGuard, error) {
		known := func(name string) bool { _, ok := mods.Module(name); return ok }
		var writers guard.Writers
		if o.writersFile != "" {
			var err error
			if writers, err = guard.ReadWriters(o.writersFile, known); err != nil {
				return nil, fmt.Errorf("--module-writers: %w", err)
			}
		}
		if writers == nil && !anyDisableConfirmation(mods) {
			return nil, nil
		}
		g := &guard.Guard{Writers: writers, Confirmation: func(name string) (bool, string) {
			m, ok := mods.Module(name)
			if !ok {
				return false, ""
			}
			return m.DisableConfirmation()
		}}
		if writers != nil {
			self, err := whoAmI(ctx, restCfg)
			if err != nil {
				log.Warn("the operator's own user not known: its writes of config values are checked against --module-writers too", logkey.Err(err))
			} else {
				g.Self = func(w guard.Writer) bool { return w.Name == self }
			}
		}
		check := func(f func(guard.Write) error) webhook.ConfigWriteCheck {
			return func(w webhook.ConfigWrite) error {
				return f(guard.Write{Operation: w.Operation, Writer: guard.Writer{Name: w.User, Groups: w.Groups}, Old: w.Old, New: w.New})
			}
		}
		log.Info("writes to modules' settings guarded at admission", slog.String(logkey.Path, o.writersFile))
		return &webhook.WriteGuard{ModuleConfig: check(g.CheckModuleConfig), ConfigMap: check(g.CheckConfigMap)}, nil
	}, nil
}

// anyDisableConfirmation reports whether some module needs a confirmation
// to be disabled.
func anyDisableConfirmation(mods *module.Set) bool {
	for _, m := range mods.Modules() {
		if need, _ := m.DisableConfirmation(); need {
			return true
		}
	}
	return false
}

// whoAmI asks the API server which user the operator's credentials are.
func whoAmI(ctx context.Context, restCfg *rest.Config) (string, error) {
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return "", fmt.Errorf("self review client: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, selfReviewTimeout)
	defer cancel()
	r, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("self subject review: %w", err)
	}
	return r.Status.UserInfo.Username, nil
}

// wireGuarded wires the operator (wire, with the client's rate limit),
// its webhook server, when there is one, with the guard of writes to
// modules' settings.
func (o *startOptions) wireGuarded(ctx context.Context, restCfg *rest.Config, log *slog.Logger, rec *metrics.Recorder, hookMetrics *metrics.HookMetrics,
	webhooks *admission.Config,
) (*operator.Operator, *event.Recorder, error) {
	writeGuard, err := o.moduleGuard.writeGuard(ctx, webhooks != nil, restCfg, log)
	if err != nil {
		return nil, nil, err
	}
	if webhooks != nil {
		webhooks.WriteGuard = writeGuard
	}
	return o.wire(withRateLimit(restCfg, o.kubeQPS, o.kubeBurst), log, rec, hookMetrics, webhooks)
}
