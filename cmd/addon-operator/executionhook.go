package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	typedcorev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"

	"github.com/addon-operator/addon-operator/pkg/executionhook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// executionHookOptions are the flags of execution-hook-controller.
type executionHookOptions struct {
	kubeconfig, kubeContext string
	logLevel, logType       string
	controller              executionhook.Options
}

func newExecutionHookCommand() *cobra.Command {
	o := &executionHookOptions{}
	cmd := &cobra.Command{
		Use:   "execution-hook-controller",
		Short: "Run the ExecutionHook controller of the execution-hooks module",
		Long: "Run the ExecutionHook controller: PreAction commands in the selected containers when an\n" +
			"ExecutionHook appears, PostAction commands when it is deleted or expires, through pods/exec,\n" +
			"only in pods where the hook's recorded requester may create pods/exec (SubjectAccessReview).\n" +
			"The execution-hooks module deploys it; it needs no operator.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd.Context()) },
	}
	fs := cmd.Flags()
	fs.StringVar(&o.kubeconfig, "kubeconfig", os.Getenv("KUBECONFIG"), kubeconfigUsage+"; empty means the in-cluster config (env KUBECONFIG)")
	fs.StringVar(&o.kubeContext, "context", "", contextUsage)
	aliasFlag(fs, "kube-config", "kubeconfig")
	aliasFlag(fs, "kube-context", "context")
	fs.StringVar(&o.logLevel, "log-level", "info", "Log level: debug, info, warn or error")
	fs.StringVar(&o.logType, "log-type", "text", "Log format: text or json")
	// -n/--namespace is the operator's namespace, as for every command;
	// --operator-namespace stays as its former spelling.
	own := pflag.NewFlagSet("controller", pflag.ContinueOnError)
	o.controller.BindFlags(own)
	own.VisitAll(func(f *pflag.Flag) {
		if f.Name != "operator-namespace" {
			fs.AddFlag(f)
		}
	})
	fs.StringVarP(&o.controller.OperatorNamespace, "namespace", "n", "", namespaceUsage("required")+
		": ExecutionHooks there never run and its ServiceAccounts never lend their rights to one")
	aliasFlag(fs, "operator-namespace", "namespace")
	return cmd
}

func (o *executionHookOptions) run(ctx context.Context) error {
	log, err := newLogger(o.logLevel, o.logType)
	if err != nil {
		return err
	}
	if o.controller.OperatorNamespace == "" {
		o.controller.OperatorNamespace = os.Getenv("ADDON_OPERATOR_NAMESPACE")
	}
	if err := o.controller.Validate(); err != nil {
		return err
	}
	restCfg, err := (&startOptions{kubeconfig: o.kubeconfig, kubeContext: o.kubeContext}).restConfig()
	if err != nil {
		return err
	}
	klog.SetSlogLogger(log.With(slog.String(logkey.Component, "client-go")))
	client, err := kubernetes.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(restCfg)
	if err != nil {
		return fmt.Errorf("dynamic client: %w", err)
	}
	broadcaster := record.NewBroadcaster(record.WithContext(ctx))
	defer broadcaster.Shutdown()
	broadcaster.StartRecordingToSink(&typedcorev1.EventSinkImpl{Interface: client.CoreV1().Events("")})
	ctrl := executionhook.New(o.controller, executionhook.Params{
		Dynamic: dyn, Client: client, Exec: executionhook.NewPodExec(restCfg, client),
		Access:  executionhook.NewSubjectAccessReviews(client),
		Events:  broadcaster.NewRecorder(scheme.Scheme, executionhook.EventSource()),
		Metrics: executionhook.NewMetrics(), Log: log, Clock: clock.RealClock{},
	})
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	return ctrl.Run(ctx)
}
