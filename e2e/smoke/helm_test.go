package smoke

import (
	"strconv"
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/release"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
)

const mainTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: smoke-main
data:
  greeting: {{ .Values.greeting | quote }}
`

// The hook resource is a ConfigMap: without a kubelet a Job never completes.
const hookTemplate = `apiVersion: v1
kind: ConfigMap
metadata:
  name: smoke-hook
  annotations:
    helm.sh/hook: pre-install,pre-upgrade
    helm.sh/hook-delete-policy: before-hook-creation
data:
  revision: {{ .Release.Revision | quote }}
`

func smokeChart() *chart.Chart {
	return &chart.Chart{
		Metadata: &chart.Metadata{APIVersion: chart.APIVersionV2, Name: "smoke", Version: "0.1.0"},
		Templates: []*chart.File{
			{Name: "templates/main.yaml", Data: []byte(mainTemplate)},
			{Name: "templates/hook.yaml", Data: []byte(hookTemplate)},
		},
	}
}

func helmConfig(t *testing.T, ns string) *action.Configuration {
	t.Helper()
	flags := genericclioptions.NewConfigFlags(false)
	flags.KubeConfig = &cp.Kubeconfig
	flags.Namespace = &ns
	cfg := new(action.Configuration)
	if err := cfg.Init(flags, ns, "secret", t.Logf); err != nil {
		t.Fatalf("init helm: %v", err)
	}
	return cfg
}

func TestHelmInstallUpgradeUninstall(t *testing.T) {
	ns := cp.Namespace(t)
	cfg := helmConfig(t, ns)
	cms := cp.Clientset(t).CoreV1().ConfigMaps(ns)
	check := func(greeting string, revision int) {
		t.Helper()
		main, err := cms.Get(t.Context(), "smoke-main", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get release object: %v", err)
		}
		if got := main.Data["greeting"]; got != greeting {
			t.Errorf("greeting = %q, want %q", got, greeting)
		}
		hook, err := cms.Get(t.Context(), "smoke-hook", metav1.GetOptions{})
		if err != nil {
			t.Fatalf("get chart hook object: %v", err)
		}
		if got := hook.Data["revision"]; got != strconv.Itoa(revision) {
			t.Errorf("hook ran for revision %q, want %d", got, revision)
		}
	}

	install := action.NewInstall(cfg)
	install.ReleaseName, install.Namespace = "smoke", ns
	rel, err := install.RunWithContext(t.Context(), smokeChart(), map[string]any{"greeting": "hello"})
	if err != nil {
		t.Fatalf("install: %v", err)
	}
	if rel.Info.Status != release.StatusDeployed || rel.Version != 1 {
		t.Fatalf("installed release: status %s version %d, want deployed 1", rel.Info.Status, rel.Version)
	}
	check("hello", 1)

	upgrade := action.NewUpgrade(cfg)
	upgrade.Namespace = ns
	rel, err = upgrade.RunWithContext(t.Context(), "smoke", smokeChart(), map[string]any{"greeting": "bye"})
	if err != nil {
		t.Fatalf("upgrade: %v", err)
	}
	if rel.Info.Status != release.StatusDeployed || rel.Version != 2 {
		t.Fatalf("upgraded release: status %s version %d, want deployed 2", rel.Info.Status, rel.Version)
	}
	check("bye", 2)

	secrets, err := cp.Clientset(t).CoreV1().Secrets(ns).List(t.Context(), metav1.ListOptions{LabelSelector: "owner=helm,name=smoke"})
	if err != nil {
		t.Fatalf("list release secrets: %v", err)
	}
	if len(secrets.Items) != 2 {
		t.Errorf("release secrets = %d, want 2 (one per revision)", len(secrets.Items))
	}

	if _, err := action.NewUninstall(cfg).Run("smoke"); err != nil {
		t.Fatalf("uninstall: %v", err)
	}
	if _, err := cms.Get(t.Context(), "smoke-main", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("release object after uninstall: err = %v, want NotFound", err)
	}
	if _, err := action.NewGet(cfg).Run("smoke"); err == nil {
		t.Error("release still recorded after uninstall")
	}
}
