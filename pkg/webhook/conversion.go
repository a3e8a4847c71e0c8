package webhook

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/addon-operator/addon-operator/pkg/hook"
	"github.com/addon-operator/addon-operator/pkg/logkey"
)

// conversionTimeout bounds one conversion request, below the API server's
// fixed 30 seconds for conversion webhooks.
const conversionTimeout = 25 * time.Second

// hookConversion is what a hook writes to $CONVERSION_RESPONSE_PATH.
type hookConversion struct {
	ConvertedObjects []json.RawMessage `json:"convertedObjects"`
	FailedMessage    string            `json:"failedMessage"`
}

// step is one declared conversion, versions in group/version form.
type step struct {
	from, to string
	conv     Conversion
}

// steps lists the declared conversions of a CRD's bindings.
func steps(crd string, convs []Conversion) []step {
	group := crdGroup(crd)
	var out []step
	for i := range convs {
		for _, v := range convs[i].Binding.Conversions {
			out = append(out, step{from: fullVersion(group, v.FromVersion), to: fullVersion(group, v.ToVersion), conv: convs[i]})
		}
	}
	return out
}

// fullVersion turns a bare version into group/version.
func fullVersion(group, v string) string {
	if strings.Contains(v, "/") {
		return v
	}
	return group + "/" + v
}

// chain finds the shortest sequence of declared steps from one version to
// another (breadth first, declaration order breaking ties); nil when there
// is none.
func chain(all []step, from, to string) []step {
	type node struct {
		version string
		path    []step
	}
	seen := map[string]bool{from: true}
	queue := []node{{version: from}}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		if n.version == to {
			return n.path
		}
		for i := range all {
			if s := &all[i]; s.from == n.version && !seen[s.to] {
				seen[s.to] = true
				queue = append(queue, node{version: s.to, path: append(append([]step(nil), n.path...), *s)})
			}
		}
	}
	return nil
}

func (s *Server) serveConversion(w http.ResponseWriter, r *http.Request) {
	crd := r.PathValue("crd")
	log := s.log.With(slog.String(logkey.Name, crd))
	body, err := io.ReadAll(io.LimitReader(r.Body, maxReviewBytes))
	if err != nil {
		http.Error(w, "read review", http.StatusBadRequest)
		return
	}
	var review apiextensionsv1.ConversionReview
	if err := json.Unmarshal(body, &review); err != nil || review.Request == nil {
		log.Warn("conversion review rejected", logkey.Err(err))
		http.Error(w, "want a ConversionReview with a request", http.StatusBadRequest)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), conversionTimeout)
	defer cancel()
	resp := &apiextensionsv1.ConversionResponse{UID: review.Request.UID}
	objs, err := s.convert(ctx, crd, review.Request, log)
	if err != nil {
		log.Error("conversion failed", logkey.Err(err))
		resp.Result = metav1.Status{Status: metav1.StatusFailure, Message: s.redactText(short(err))}
	} else {
		resp.ConvertedObjects, resp.Result = objs, metav1.Status{Status: metav1.StatusSuccess}
	}
	writeJSON(w, log, apiextensionsv1.ConversionReview{TypeMeta: review.TypeMeta, Response: resp})
}

// convert brings every object to the desired version, step by step: the
// objects at one version go through the first step of their chain
// together, until all are converted. The order of objects is kept.
func (s *Server) convert(ctx context.Context, crd string, req *apiextensionsv1.ConversionRequest, log *slog.Logger) ([]runtime.RawExtension, error) {
	all := steps(crd, s.reg.conversions(crd))
	objs := make([]json.RawMessage, len(req.Objects))
	versions := make([]string, len(req.Objects))
	for i, o := range req.Objects {
		objs[i] = o.Raw
		v, err := apiVersionOf(o.Raw)
		if err != nil {
			return nil, fmt.Errorf("object %d: %w", i, err)
		}
		versions[i] = v
	}
	for range len(all) * max(len(objs), 1) {
		from := ""
		for _, v := range versions {
			if v != req.DesiredAPIVersion {
				from = v
				break
			}
		}
		if from == "" {
			break
		}
		path := chain(all, from, req.DesiredAPIVersion)
		if path == nil {
			return nil, fmt.Errorf("no declared conversion from %s to %s", from, req.DesiredAPIVersion)
		}
		if err := s.runStep(ctx, path[0], req, objs, versions, log); err != nil {
			return nil, err
		}
	}
	out := make([]runtime.RawExtension, len(objs))
	for i := range objs {
		if versions[i] != req.DesiredAPIVersion {
			return nil, fmt.Errorf("object %d still at %s", i, versions[i])
		}
		out[i] = runtime.RawExtension{Raw: objs[i]}
	}
	return out, nil
}

// runStep runs one step's hook for the objects at its source version and
// puts its converted objects in their places.
func (s *Server) runStep(ctx context.Context, st step, req *apiextensionsv1.ConversionRequest, objs []json.RawMessage, versions []string, log *slog.Logger) error {
	var idx []int
	sub := &apiextensionsv1.ConversionRequest{UID: req.UID, DesiredAPIVersion: st.to}
	for i, v := range versions {
		if v == st.from {
			idx = append(idx, i)
			sub.Objects = append(sub.Objects, runtime.RawExtension{Raw: objs[i]})
		}
	}
	review, err := json.Marshal(apiextensionsv1.ConversionReview{
		TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "ConversionReview"}, Request: sub,
	})
	if err != nil {
		return fmt.Errorf("encode ConversionReview: %w", err)
	}
	bc := hook.BindingContext{Binding: st.conv.Binding.Name, Type: hook.TypeConversion, FromVersion: st.from, ToVersion: st.to, Review: review}
	res, err := s.runBounded(ctx, st.conv.Run, bc)
	if err != nil {
		return fmt.Errorf("hook %s (%s -> %s): %w", st.conv.Hook, st.from, st.to, err)
	}
	converted, err := parseConversion(res.ConversionResponse, len(idx), st.to)
	if err != nil {
		return fmt.Errorf("hook %s (%s -> %s): %w", st.conv.Hook, st.from, st.to, err)
	}
	for j, i := range idx {
		objs[i], versions[i] = converted[j], st.to
	}
	log.Debug("objects converted", slog.String(logkey.Hook, st.conv.Hook), slog.Int(logkey.Count, len(idx)))
	return nil
}

// parseConversion reads a hook's conversion response: n objects, each at
// version to.
func parseConversion(data []byte, n int, to string) ([]json.RawMessage, error) {
	if len(data) == 0 {
		return nil, errors.New("empty response file")
	}
	var hc hookConversion
	if err := json.Unmarshal(data, &hc); err != nil {
		return nil, fmt.Errorf("parse response: %w", err)
	}
	if hc.FailedMessage != "" {
		return nil, errors.New(hc.FailedMessage)
	}
	if len(hc.ConvertedObjects) != n {
		return nil, fmt.Errorf("%d objects converted, want %d", len(hc.ConvertedObjects), n)
	}
	for i, o := range hc.ConvertedObjects {
		v, err := apiVersionOf(o)
		if err != nil {
			return nil, fmt.Errorf("converted object %d: %w", i, err)
		}
		if v != to {
			return nil, fmt.Errorf("converted object %d has apiVersion %s, want %s", i, v, to)
		}
	}
	return hc.ConvertedObjects, nil
}

func apiVersionOf(raw []byte) (string, error) {
	var tm metav1.TypeMeta
	if err := json.Unmarshal(raw, &tm); err != nil {
		return "", fmt.Errorf("decode object: %w", err)
	}
	if tm.APIVersion == "" {
		return "", errors.New("object without apiVersion")
	}
	return tm.APIVersion, nil
}
