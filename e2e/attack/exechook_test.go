package attack

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"k8s.io/utils/ptr"

	"github.com/addon-operator/addon-operator/e2e/kubelet"
	"github.com/addon-operator/addon-operator/e2e/operatortest"
	hooksv1 "github.com/addon-operator/addon-operator/pkg/apis/hooks/v1alpha1"
	"github.com/addon-operator/addon-operator/pkg/status"
)

// execHookSecret is what a container's file holds and an attacker wants
// to read through a hook's output.
const execHookSecret = "s3cr3t-token-of-the-db"

// execHookEnv is one installation of the execution-hooks module with its
// controller, a fake kubelet, two application namespaces and the
// operator's, and the users of the attacks.
type execHookEnv struct {
	opNS, a, b string
	node       *kubelet.Kubelet
	nodeName   string
	ctrlOut    *execHookBuffer
	// attacker may only create and get ExecutionHooks, in a, b and the
	// operator's namespace.
	attacker *execHookUser
	// dba may create ExecutionHooks and pods/exec in a, and only create
	// and get ExecutionHooks in b.
	dba *execHookUser
}

type execHookUser struct {
	name string // the ServiceAccount's user name
	dyn  dynamic.Interface
}

// TestExecHookAttacker tries, as a user whose rights are ExecutionHooks
// (and at most pods/exec in one namespace), each way an ExecutionHook
// used to be pods/exec with output for whoever may create one.
func TestExecHookAttacker(t *testing.T) {
	t.Parallel()
	e := execHookSetup(t)
	t.Run("group", func(t *testing.T) {
		t.Run("ExecsIntoPodOfOwnNamespaceWithOnlyCreateExecutionHooks", func(t *testing.T) {
			t.Parallel()
			execHookAttackOwnNamespace(t, e)
		})
		t.Run("ExecsIntoPodOfAnotherNamespaceThroughItsTemplate", func(t *testing.T) {
			t.Parallel()
			execHookAttackOtherNamespace(t, e)
		})
		t.Run("ExecsIntoTheOperatorsPod", func(t *testing.T) { t.Parallel(); execHookAttackOperator(t, e) })
		t.Run("ReadsCommandOutputFromStatusAndEvents", func(t *testing.T) { t.Parallel(); execHookAttackOutput(t, e) })
		t.Run("ForgesTheRecordedRequester", func(t *testing.T) { t.Parallel(); execHookAttackForge(t, e) })
		t.Run("ForgesTheRecordedRequesterPastTheMutatingStep", func(t *testing.T) { t.Parallel(); execHookAttackForgeValidating(t) })
		t.Run("UserWithExecRightGetsTheActionRun", func(t *testing.T) { t.Parallel(); execHookAllowed(t, e) })
	})
}

// execHookAttackOwnNamespace: create executionhooks alone does not run a
// command in a pod of the namespace.
func execHookAttackOwnNamespace(t *testing.T, e *execHookEnv) {
	t.Helper()
	e.pod(t, e.a, "own-db")
	e.create(t, e.attacker, e.a, "own", `{"podContainerNamesList": [{"podName": "own-db"}], "preAction": `+execHookAppend("pwned")+`}`)
	hook := e.waitHook(t, e.a, "own")
	e.assertNotRun(t, e.a, "own-db", hook, "ExecForbidden", "create pods/exec", "pod own-db")
}

// execHookAttackOtherNamespace: pods/exec in one namespace and create
// executionhooks in another do not run the other namespace's template in
// its pods; a template is never looked up outside the hook's namespace.
func execHookAttackOtherNamespace(t *testing.T, e *execHookEnv) {
	t.Helper()
	e.pod(t, e.b, "other-db")
	e.createTemplate(t, e.b, "b-freeze")
	e.create(t, e.dba, e.b, "via-template", `{"podSelector": {}, "executionHookTemplateName": "b-freeze"}`)
	hook := e.waitHook(t, e.b, "via-template")
	e.assertNotRun(t, e.b, "other-db", hook, "ExecForbidden", e.dba.name, "create pods/exec", "pod other-db", "namespace "+e.b)

	// The template of b named from a: not found in a, said so, nothing runs.
	e.create(t, e.attacker, e.a, "cross-template", `{"podSelector": {}, "executionHookTemplateName": "b-freeze"}`)
	var cond *metav1.Condition
	operatortest.Poll(t, "TemplateFound False on cross-template", func() bool {
		h := e.getHook(t, e.a, "cross-template")
		cond = meta.FindStatusCondition(h.Status.Conditions, hooksv1.ConditionTemplateFound)
		return cond != nil
	})
	if cond.Status != metav1.ConditionFalse || cond.Reason != "TemplateNotFound" {
		t.Errorf("TemplateFound %+v, want False TemplateNotFound", cond)
	}
	if reasons := e.eventReasons(t, e.a, "cross-template"); !strings.Contains(strings.Join(reasons, ","), "TemplateNotFound") {
		t.Errorf("events %v, want TemplateNotFound", reasons)
	}
	if runs := e.runs(t, e.b, "other-db"); runs != "" {
		t.Errorf("pod other-db ran %q", runs)
	}
}

// execHookAttackOperator: a hook in the operator's namespace does not reach
// the operator's pod, whose token could exec everywhere.
func execHookAttackOperator(t *testing.T, e *execHookEnv) {
	t.Helper()
	e.pod(t, e.opNS, "addon-operator-0")
	e.create(t, e.attacker, e.opNS, "operator", `{"podContainerNamesList": [{"podName": "addon-operator-0"}], "preAction": `+execHookAppend("pwned")+`}`)
	hook := e.waitHook(t, e.opNS, "operator")
	e.assertNotRun(t, e.opNS, "addon-operator-0", hook, "OperatorNamespace", "operator's")
}

// execHookAttackOutput: what a command prints reaches neither the status
// nor Events nor the controller's log, unless its hook asks for it, and
// then at most 4 KiB of it, in the status only.
func execHookAttackOutput(t *testing.T, e *execHookEnv) {
	t.Helper()
	e.pod(t, e.a, "out-db")
	dir := e.node.ContainerDir(e.a, "out-db", "db") // made at the first exec; made here first
	if err := os.MkdirAll(dir, 0o750); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "secret"), []byte(execHookSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	leak := `{"exec": {"command": ["sh", "-c", "cat secret; exit 1"]}, "actionTimeoutSeconds": 20}`
	e.create(t, e.attacker, e.a, "leak-own", `{"podContainerNamesList": [{"podName": "out-db"}], "preAction": `+leak+`}`)
	// A hook of someone allowed to exec, run and failing, without
	// captureOutput: the attacker may read it.
	e.create(t, e.dba, e.a, "leak-dba", `{"podContainerNamesList": [{"podName": "out-db"}], "preAction": `+leak+`}`)
	// With captureOutput: 64 KiB printed, the end kept.
	e.create(t, e.dba, e.a, "capture", `{"podContainerNamesList": [{"podName": "out-db"}], "preAction":
		{"exec": {"command": ["sh", "-c", "head -c 65536 /dev/zero | tr '\\0' x; cat secret"]}, "actionTimeoutSeconds": 20, "captureOutput": true}}`)
	for _, name := range []string{"leak-own", "leak-dba"} {
		e.waitHook(t, e.a, name)
		u, err := e.attacker.dyn.Resource(hooksv1.ExecutionHooksGVR()).Namespace(e.a).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			t.Fatalf("the attacker reads %s: %v", name, err)
		}
		if b, _ := json.Marshal(u.Object); bytes.Contains(b, []byte(execHookSecret)) {
			t.Errorf("hook %s shows the command's output to the attacker: %s", name, b)
		}
		if msgs := e.eventMessages(t, e.a, name); strings.Contains(msgs, execHookSecret) {
			t.Errorf("Events of %s hold the command's output:\n%s", name, msgs)
		}
	}
	if h := e.getHook(t, e.a, "leak-dba"); h.Status.PreActionSucceed == nil || *h.Status.PreActionSucceed {
		t.Errorf("leak-dba: preActionSucceed %v, want false (the command ran and failed)", h.Status.PreActionSucceed)
	}
	h := e.waitHook(t, e.a, "capture")
	out := h.Status.ContainerExecutionHookStatuses[0].PreActionStatus.Output
	if len(out) > hooksv1.MaxCapturedOutput || !strings.HasSuffix(out, execHookSecret) {
		t.Errorf("captured output: %d bytes ending %q, want at most %d ending with the secret", len(out), out[max(0, len(out)-40):], hooksv1.MaxCapturedOutput)
	}
	if msgs := e.eventMessages(t, e.a, "capture"); strings.Contains(msgs, execHookSecret) {
		t.Errorf("Events of capture hold the command's output:\n%s", msgs)
	}
	if strings.Contains(e.ctrlOut.String(), execHookSecret) {
		t.Errorf("the controller's log holds a command's output")
	}
}

// execHookAttackForge: a requester written by the client is overwritten
// with the real one, so naming someone allowed to exec runs nothing.
func execHookAttackForge(t *testing.T, e *execHookEnv) {
	t.Helper()
	e.pod(t, e.a, "forge-db")
	e.create(t, e.attacker, e.a, "forged", `{"requester": {"username": "`+e.dba.name+`", "groups": ["system:masters", "system:authenticated"]},
		"podContainerNamesList": [{"podName": "forge-db"}], "preAction": `+execHookAppend("pwned")+`}`)
	hook := e.waitHook(t, e.a, "forged")
	if r := hook.Spec.Requester; r == nil || r.Username != e.attacker.name || strings.Contains(strings.Join(r.Groups, ","), "system:masters") {
		t.Errorf("stored requester %+v, want the attacker %s as the API server knows it", r, e.attacker.name)
	}
	e.assertNotRun(t, e.a, "forge-db", hook, "ExecForbidden", e.attacker.name)
}

// execHookAttackForgeValidating: a requester that differs from what the
// mutating step writes (a later mutating webhook, a request that skipped
// it) is refused by the validating step. The API server always runs the
// mutating step first, so the module's hook is run here directly, as the
// operator runs it.
func execHookAttackForgeValidating(t *testing.T) {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "modules", "060-execution-hooks", "hooks", "requester")
	alice := `{"username": "alice", "uid": "1", "groups": ["team-a", "system:authenticated"]}`
	for _, tc := range []struct {
		name, typ, op, object, old string
		allowed                    bool
		patch                      string
	}{
		{"create naming someone else", "Validating", "CREATE", `{"requester": {"username": "admin", "groups": ["system:masters"]}, "preAction": 1}`, "", false, ""},
		{"create without the field", "Validating", "CREATE", `{"preAction": 1}`, "", false, ""},
		{"create as recorded", "Validating", "CREATE", `{"requester": ` + alice + `, "preAction": 1}`, "", true, ""},
		{"spec changed, old requester kept", "Validating", "UPDATE", `{"requester": {"username": "bob"}, "postAction": 2}`, `{"requester": {"username": "bob"}, "postAction": 1}`, false, ""},
		{"metadata only, requester changed", "Validating", "UPDATE", `{"requester": ` + alice + `, "postAction": 1}`, `{"requester": {"username": "bob"}, "postAction": 1}`, false, ""},
		{"metadata only, requester kept", "Validating", "UPDATE", `{"requester": {"username": "bob"}, "postAction": 1}`, `{"requester": {"username": "bob"}, "postAction": 1}`, true, ""},
		{"mutating overwrites a forged one", "Mutating", "CREATE", `{"requester": {"username": "admin"}, "preAction": 1}`, "", true,
			`[{"op":"add","path":"/spec/requester","value":{"username":"alice","uid":"1","groups":["team-a","system:authenticated"]}}]`},
		{"mutating keeps the old one on a metadata change", "Mutating", "UPDATE", `{"requester": {"username": "admin"}, "postAction": 1}`, `{"requester": {"username": "bob"}, "postAction": 1}`, true,
			`[{"op":"add","path":"/spec/requester","value":{"username":"bob"}}]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := `{"operation": "` + tc.op + `", "userInfo": ` + alice + `, "object": {"spec": ` + tc.object + `}`
			if tc.old != "" {
				req += `, "oldObject": {"spec": ` + tc.old + `}`
			}
			ctx := `[{"binding": "b", "type": "` + tc.typ + `", "review": {"request": ` + req + `}}}]`
			dir := t.TempDir()
			in, out := filepath.Join(dir, "context.json"), filepath.Join(dir, "response.json")
			if err := os.WriteFile(in, []byte(ctx), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.CommandContext(t.Context(), script)
			cmd.Env = append(os.Environ(), "BINDING_CONTEXT_PATH="+in, "VALIDATING_RESPONSE_PATH="+out)
			if b, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("%s: %v: %s", script, err, b)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			var resp struct {
				Allowed bool   `json:"allowed"`
				Message string `json:"message"`
				Patch   []byte `json:"patch"`
			}
			if err := json.Unmarshal(data, &resp); err != nil {
				t.Fatalf("response %s: %v", data, err)
			}
			if resp.Allowed != tc.allowed || string(resp.Patch) != tc.patch {
				t.Errorf("response allowed %v patch %s message %q, want allowed %v patch %s", resp.Allowed, resp.Patch, resp.Message, tc.allowed, tc.patch)
			}
			if !tc.allowed && !strings.Contains(resp.Message, "spec.requester") {
				t.Errorf("message %q does not name spec.requester", resp.Message)
			}
		})
	}
}

// execHookAllowed: a user who may exec into the pod gets the action run.
func execHookAllowed(t *testing.T, e *execHookEnv) {
	t.Helper()
	e.pod(t, e.a, "ok-db")
	e.create(t, e.dba, e.a, "allowed", `{"podContainerNamesList": [{"podName": "ok-db"}], "preAction": `+execHookAppend("freeze")+`}`)
	hook := e.waitHook(t, e.a, "allowed")
	if !*hook.Status.PreActionSucceed || e.runs(t, e.a, "ok-db") != "freeze\n" {
		t.Errorf("preActionSucceed %v, runs %q: want the action run once", *hook.Status.PreActionSucceed, e.runs(t, e.a, "ok-db"))
	}
	if cond := meta.FindStatusCondition(hook.Status.Conditions, hooksv1.ConditionAuthorized); cond == nil || cond.Status != metav1.ConditionTrue {
		t.Errorf("Authorized %+v, want True", cond)
	}
	if r := hook.Spec.Requester; r == nil || r.Username != e.dba.name {
		t.Errorf("requester %+v, want %s", r, e.dba.name)
	}
}

// assertNotRun checks that the hook ended without running in the pod,
// with the Authorized condition False for reason and naming parts.
func (e *execHookEnv) assertNotRun(t *testing.T, ns, pod string, hook *hooksv1.ExecutionHook, reason string, parts ...string) {
	t.Helper()
	if runs := e.runs(t, ns, pod); runs != "" {
		t.Errorf("the hook ran in pod %s: %q", pod, runs)
	}
	if *hook.Status.PreActionSucceed {
		t.Errorf("preActionSucceed true, want false")
	}
	cond := meta.FindStatusCondition(hook.Status.Conditions, hooksv1.ConditionAuthorized)
	if cond == nil || cond.Status != metav1.ConditionFalse || cond.Reason != reason {
		t.Fatalf("Authorized condition %+v, want False %s", cond, reason)
	}
	for _, p := range parts {
		if !strings.Contains(cond.Message, p) {
			t.Errorf("Authorized message %q does not name %q", cond.Message, p)
		}
	}
	if reasons := e.eventReasons(t, ns, hook.Name); !strings.Contains(strings.Join(reasons, ","), "Forbidden") {
		t.Errorf("events %v, want Forbidden", reasons)
	}
}

// execHookSetup installs the module for a, b and the operator's namespace,
// starts its controller as the module's ServiceAccount and makes the
// users.
func execHookSetup(t *testing.T) *execHookEnv {
	t.Helper()
	h := operatortest.New(t, cp, bin)
	e := &execHookEnv{opNS: h.Namespace, a: cp.Namespace(t), b: cp.Namespace(t), ctrlOut: &execHookBuffer{}}
	_, port, _ := net.SplitHostPort(operatortest.FreeAddress(t))
	t.Cleanup(func() {
		adm, bg := h.Client.AdmissionregistrationV1(), context.WithoutCancel(t.Context())
		_ = adm.ValidatingWebhookConfigurations().Delete(bg, h.Namespace, metav1.DeleteOptions{})
		_ = adm.MutatingWebhookConfigurations().Delete(bg, h.Namespace, metav1.DeleteOptions{})
	})
	h.SetConfig(map[string]string{
		"executionHooksEnabled": "true",
		"executionHooks":        fmt.Sprintf("namespaces: [%q, %q, %q]\n", e.a, e.b, e.opNS),
	})
	modules := t.TempDir()
	_, file, _, _ := runtime.Caller(0)
	src := filepath.Join(filepath.Dir(file), "..", "..", "modules", "060-execution-hooks")
	if err := os.CopyFS(filepath.Join(modules, "060-execution-hooks"), os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	op := h.Start(operatortest.Options{ModulesDir: modules, GlobalHooksDir: t.TempDir(), Args: []string{
		"--retry-delay=200ms", "--retry-max-delay=2s",
		"--webhook-server", "--webhook-url=https://127.0.0.1:" + port,
		"--validating-webhook-listen-address=127.0.0.1", "--validating-webhook-listen-port=" + port,
		"--validating-webhook-configuration-name=" + h.Namespace, "--mutating-webhook-configuration-name=" + h.Namespace,
	}})
	h.MakeDeploymentAvailable(h.Namespace, "execution-hook-controller")
	op.WaitModule("execution-hooks", "installed", func(m status.ModuleStatus) bool { return m.Revision > 0 && m.LastError == "" })

	k, err := kubelet.Start(t.Context(), cert, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	e.node, e.nodeName = k, "node-"+strings.ToLower(e.a)
	if err := k.RegisterNode(t.Context(), cp.Clientset(t), e.nodeName); err != nil {
		t.Fatal(err)
	}

	hooksRule := rbacv1.PolicyRule{APIGroups: []string{hooksv1.Group}, Resources: []string{"executionhooks"}, Verbs: []string{"create", "get"}}
	execRule := rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{"pods/exec"}, Verbs: []string{"create", "get"}}
	e.attacker = e.user(t, e.a, "attacker", map[string][]rbacv1.PolicyRule{e.a: {hooksRule}, e.b: {hooksRule}, e.opNS: {hooksRule}})
	e.dba = e.user(t, e.a, "dba", map[string][]rbacv1.PolicyRule{e.a: {hooksRule, execRule}, e.b: {hooksRule}})
	e.startController(t, h.Namespace)
	return e
}

// user makes a ServiceAccount in ns with the rules granted by a Role in
// each namespace, and returns it with a client holding its token.
func (e *execHookEnv) user(t *testing.T, ns, name string, rules map[string][]rbacv1.PolicyRule) *execHookUser {
	t.Helper()
	client := cp.Clientset(t)
	ctx := t.Context()
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := client.CoreV1().ServiceAccounts(ns).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for where, r := range rules {
		role := &rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: r}
		if _, err := client.RbacV1().Roles(where).Create(ctx, role, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		rb := &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
			RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name},
			Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: name, Namespace: ns}}}
		if _, err := client.RbacV1().RoleBindings(where).Create(ctx, rb, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	cfg := rest.AnonymousClientConfig(cp.Config)
	cfg.BearerToken = execHookToken(t, ns, name)
	d, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &execHookUser{name: "system:serviceaccount:" + ns + ":" + name, dyn: d}
}

func execHookToken(t *testing.T, ns, sa string) string {
	t.Helper()
	req := &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: ptr.To[int64](3600)}}
	tr, err := cp.Clientset(t).CoreV1().ServiceAccounts(ns).CreateToken(t.Context(), sa, req, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("token of ServiceAccount %s/%s: %v", ns, sa, err)
	}
	return tr.Status.Token
}

// startController runs execution-hook-controller as the module's
// ServiceAccount; the operator's namespace comes from the environment, as
// the module's Deployment could give it.
func (e *execHookEnv) startController(t *testing.T, opNS string) {
	t.Helper()
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["local"] = &clientcmdapi.Cluster{Server: cp.Config.Host, CertificateAuthority: cp.Config.CAFile, CertificateAuthorityData: cp.Config.CAData}
	cfg.AuthInfos["sa"] = &clientcmdapi.AuthInfo{Token: execHookToken(t, opNS, "execution-hook-controller")}
	cfg.Contexts["local"] = &clientcmdapi.Context{Cluster: "local", AuthInfo: "sa"}
	cfg.CurrentContext = "local"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "execution-hook-controller", "--kube-config="+path, //nolint:noctx // stopped at cleanup
		"--log-type=json", "--log-level=debug", "--metrics-address=", "--default-action-timeout=20s",
		"--namespaces="+strings.Join([]string{e.a, e.b, opNS}, ","))
	cmd.Env = append(os.Environ(), "ADDON_OPERATOR_NAMESPACE="+opNS)
	cmd.Stdout, cmd.Stderr = e.ctrlOut, e.ctrlOut
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(operatortest.Timeout):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("controller output:\n%s", e.ctrlOut.String())
		}
	})
}

// pod runs a pod with one container db on the fake kubelet.
func (e *execHookEnv) pod(t *testing.T, ns, name string) {
	t.Helper()
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name}}
	if _, err := kubelet.RunPod(t.Context(), cp.Clientset(t), e.nodeName, p, "db"); err != nil {
		t.Fatal(err)
	}
}

// runs returns what actions appended to the file runs of the pod's db.
func (e *execHookEnv) runs(t *testing.T, ns, pod string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(e.node.ContainerDir(ns, pod, "db"), "runs"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return string(data)
}

func execHookAppend(word string) string {
	return fmt.Sprintf(`{"exec": {"command": ["sh", "-c", "echo %s >> runs"]}, "actionTimeoutSeconds": 20}`, word)
}

// create creates an ExecutionHook as the user.
func (e *execHookEnv) create(t *testing.T, u *execHookUser, ns, name, spec string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	manifest := `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHook", "metadata": {"name": "` + name + `"}, "spec": ` + spec + `}`
	if err := obj.UnmarshalJSON([]byte(manifest)); err != nil {
		t.Fatalf("%v: %s", err, manifest)
	}
	if _, err := u.dyn.Resource(hooksv1.ExecutionHooksGVR()).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create ExecutionHook %s/%s as %s: %v", ns, name, u.name, err)
	}
}

// createTemplate creates, as the administrator, a template appending
// "frozen" to runs.
func (e *execHookEnv) createTemplate(t *testing.T, ns, name string) {
	t.Helper()
	obj := &unstructured.Unstructured{}
	manifest := `{"apiVersion": "hooks.addon-operator.io/v1alpha1", "kind": "ExecutionHookTemplate", "metadata": {"name": "` + name + `"}, "preAction": ` + execHookAppend("frozen") + `}`
	if err := obj.UnmarshalJSON([]byte(manifest)); err != nil {
		t.Fatal(err)
	}
	d, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Resource(hooksv1.ExecutionHookTemplatesGVR()).Namespace(ns).Create(t.Context(), obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (e *execHookEnv) getHook(t *testing.T, ns, name string) *hooksv1.ExecutionHook {
	t.Helper()
	d, err := dynamic.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	u, err := d.Resource(hooksv1.ExecutionHooksGVR()).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		t.Fatalf("ExecutionHook %s/%s not found", ns, name)
	}
	if err != nil {
		t.Fatal(err)
	}
	b, _ := u.MarshalJSON()
	hook := &hooksv1.ExecutionHook{}
	if err := json.Unmarshal(b, hook); err != nil {
		t.Fatal(err)
	}
	return hook
}

// waitHook waits until the hook's PreAction has a final result.
func (e *execHookEnv) waitHook(t *testing.T, ns, name string) *hooksv1.ExecutionHook {
	t.Helper()
	var hook *hooksv1.ExecutionHook
	operatortest.Poll(t, "ExecutionHook "+ns+"/"+name+": PreAction done", func() bool {
		hook = e.getHook(t, ns, name)
		return hook.Status.PreActionSucceed != nil
	})
	return hook
}

func (e *execHookEnv) events(t *testing.T, ns, name string) []corev1.Event {
	t.Helper()
	list, err := cp.Clientset(t).CoreV1().Events(ns).List(t.Context(), metav1.ListOptions{FieldSelector: "involvedObject.name=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return list.Items
}

func (e *execHookEnv) eventReasons(t *testing.T, ns, name string) []string {
	t.Helper()
	evs := e.events(t, ns, name)
	out := make([]string, 0, len(evs))
	for i := range evs {
		out = append(out, evs[i].Reason)
	}
	return out
}

func (e *execHookEnv) eventMessages(t *testing.T, ns, name string) string {
	t.Helper()
	evs := e.events(t, ns, name)
	out := make([]string, 0, len(evs))
	for i := range evs {
		out = append(out, evs[i].Reason+": "+evs[i].Message)
	}
	return strings.Join(out, "\n")
}

// execHookBuffer is the controller's output, written by its process and
// read by the tests.
type execHookBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *execHookBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *execHookBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
