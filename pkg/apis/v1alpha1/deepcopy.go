package v1alpha1

import "k8s.io/apimachinery/pkg/runtime"

// DeepCopyInto copies in into out. It is the one deepcopy function written
// by hand (ModuleConfigSpec opts out of generation): controller-gen cannot
// copy values of type any. Settings hold decoded JSON (maps, slices,
// strings, int64 and float64 numbers, booleans, nil), which
// runtime.DeepCopyJSON copies; it panics on other types.
func (in *ModuleConfigSpec) DeepCopyInto(out *ModuleConfigSpec) {
	*out = *in
	if in.Enabled != nil {
		out.Enabled = new(*in.Enabled)
	}
	if in.Settings != nil {
		out.Settings = runtime.DeepCopyJSON(in.Settings)
	}
}

// DeepCopy returns a copy of in.
func (in *ModuleConfigSpec) DeepCopy() *ModuleConfigSpec {
	if in == nil {
		return nil
	}
	out := new(ModuleConfigSpec)
	in.DeepCopyInto(out)
	return out
}
