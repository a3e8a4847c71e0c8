// Package logkey is the one list of keys the operator's log lines use.
//
// Every attribute of every log line in pkg/ and cmd/ takes its key from
// here, as a typed slog.Attr (slog.String(logkey.Module, name)), so that
// someone filtering the logs learns one short vocabulary: the same key
// always names the same thing, whichever package wrote the line. The
// sloglint settings in .golangci.yml reject raw string keys and key-value
// pairs; a test in this package rejects keys that are constants of any
// other package. A new key belongs here only when none of these fits;
// document what it means next to it.
//
// Values are names, counts, durations and errors; never
// configuration values or secrets (log a checksum instead).
package logkey

import "log/slog"

// The keys most lines carry.
const (
	// Module is an addon module's name (or a list of module names, or of
	// the ConfigMap keys of module sections, when a line is about several).
	Module = "module"
	// Hook is a hook's name: its path under the module's or the global
	// hooks directory.
	Hook = "hook"
	// Binding is the name a hook gives one of its bindings.
	Binding = "binding"
	// Queue is a task queue's name.
	Queue = "queue"
	// Task is a task's kind and subject, as the task prints itself.
	Task = "task"
	// Release is a Helm release's name.
	Release = "release"
	// Namespace is a Kubernetes namespace.
	Namespace = "namespace"
	// Name is a Kubernetes object's name, or the name of whatever else the
	// message is about (a lease, a listen address, a request path).
	Name = "name"
	// Kind is a Kubernetes kind.
	Kind = "kind"
	// Duration is how long what the message reports took (or waits).
	Duration = "duration"
	// Error is the error that made the line.
	Error = "error"
)

// The keys the operator needs beyond rule 8's.
const (
	// Count is how many of what the message names there were: objects,
	// CRDs, modules, failed runs in a row, bytes of hook output dropped.
	Count = "count"
	// Limit is the configured bound the message says was reached, in the
	// unit of Count.
	Limit = "limit"
	// Revision is a Helm release revision, or a range "first-last" of them.
	Revision = "revision"
	// Reason says in words why the operator did what the message reports.
	Reason = "reason"
	// Path is a file or directory on disk: a module dir, a hook, a values
	// file.
	Path = "path"
	// Memory says whether a directory is memory-backed (tmpfs).
	Memory = "memory"
	// Fields lists, comma-separated, the field paths of an object that
	// differ from its manifest.
	Fields = "fields"
	// Owner is who owned an object before the operator adopted it.
	Owner = "owner"
	// Monitor is a Kubernetes monitor's id (module/hook/kind/index), which
	// tells apart two hooks' bindings of one name.
	Monitor = "monitor"
	// Identity is a replica's identity in leader election.
	Identity = "identity"
	// Component is the library a bridged log line comes from (client-go).
	Component = "component"
	// Stream is a hook's output stream, stdout or stderr.
	Stream = "stream"
	// Line is one line of a hook's output.
	Line = "line"
	// Container is a container of a pod, as pod/container.
	Container = "container"
	// Percent is a percentage, such as the garbage collector's target.
	Percent = "percent"
	// User is the user name the API server authenticated for a request.
	User = "user"
)

// Err is the Error attribute of err: its message, as text in every handler
// (an error formatted with %+v could carry a stack trace), or null when
// err is nil.
func Err(err error) slog.Attr {
	if err == nil {
		return slog.Any(Error, nil)
	}
	return slog.String(Error, err.Error())
}
