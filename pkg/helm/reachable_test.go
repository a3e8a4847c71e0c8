package helm

import (
	"testing"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/kube"

	"github.com/addon-operator/addon-operator/pkg/helm/kubeclient"
)

// TestInNamespaceReachesTheWrappedClient checks that a release's namespace
// reaches Helm's kube client behind the reachability wrapper: objects
// without a namespace must land in the module's namespace.
func TestInNamespaceReachesTheWrappedClient(t *testing.T) {
	kc := &kube.Client{Namespace: "operator"}
	cfg := &action.Configuration{KubeClient: kubeclient.Client{Client: kc}}
	(&Client{}).inNamespace(cfg, "module-ns")
	if kc.Namespace != "module-ns" {
		t.Errorf("kube client namespace = %q, want module-ns", kc.Namespace)
	}
}
