package config

import (
	"testing"

	"github.com/addon-operator/addon-operator/pkg/values"
)

func TestDecideHold(t *testing.T) {
	tests := []struct {
		name string
		in   HoldInput
		want string
	}{
		{"a valid content applies", HoldInput{Last: LastKept}, ""},
		{"a valid content applies over an unreadable saved one", HoldInput{Last: LastUnreadable}, ""},
		{"an invalid content is held", HoldInput{Invalid: true, Last: LastKept}, HoldInvalid},
		{"an invalid content is held even with the empty policy", HoldInput{Invalid: true, Last: LastKept, EmptyWhenMissing: true}, HoldInvalid},
		{"a first install without a ConfigMap is empty", HoldInput{Absent: true, Empty: true, Last: LastNone}, ""},
		{"a first install without ModuleConfigs is empty", HoldInput{Absent: true, Empty: true, ModuleConfigs: true, Last: LastNone}, ""},
		{"a missing ConfigMap over an empty configuration loses nothing", HoldInput{Absent: true, Empty: true, Last: LastEmpty}, ""},
		{"a missing ConfigMap holds", HoldInput{Absent: true, Empty: true, Last: LastKept}, HoldConfigMapMissing},
		{"a missing ConfigMap holds over an unreadable saved one", HoldInput{Absent: true, Empty: true, Last: LastUnreadable}, HoldConfigMapMissing},
		{"no ModuleConfigs hold", HoldInput{Absent: true, Empty: true, ModuleConfigs: true, Last: LastKept}, HoldNoModuleConfigs},
		{"the empty policy applies a missing ConfigMap", HoldInput{Absent: true, Empty: true, Last: LastKept, EmptyWhenMissing: true}, ""},
		{"the empty policy applies no ModuleConfigs", HoldInput{Absent: true, Empty: true, ModuleConfigs: true, Last: LastKept, EmptyWhenMissing: true}, ""},
		{"an empty ConfigMap without confirmation holds", HoldInput{Empty: true, Last: LastKept}, HoldEmptyUnconfirmed},
		{"an empty ModuleConfig set without confirmation holds", HoldInput{Empty: true, ModuleConfigs: true, Last: LastKept}, HoldEmptyUnconfirmed},
		{"an empty ConfigMap with confirmation applies", HoldInput{Empty: true, Confirmed: true, Last: LastKept}, ""},
		{"a confirmation on nothing confirms nothing", HoldInput{Absent: true, Empty: true, Confirmed: true, Last: LastKept}, HoldConfigMapMissing},
		{"a confirmation does not matter on a content", HoldInput{Confirmed: true, Last: LastKept}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := DecideHold(tt.in); got != tt.want {
				t.Errorf("DecideHold(%+v) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestIsEmptyAndLastOf(t *testing.T) {
	empty, _ := Parse(nil)
	emptySection, _ := Parse(map[string]string{"certManager": "{}", "global": ""})
	tests := []struct {
		name  string
		c     *Config
		empty bool
		last  Last
	}{
		{"nil", nil, true, LastNone},
		{"no keys", empty, true, LastEmpty},
		{"empty sections", emptySection, true, LastEmpty},
		{"global values", &Config{Global: values.Values{"a": 1}}, false, LastKept},
		{"a module section", &Config{Modules: map[string]values.Values{"a": {"b": 1}}}, false, LastKept},
		{"an enabled flag set false", &Config{Enabled: map[string]bool{"a": false}}, false, LastKept},
		{"a maintenance mode", &Config{Maintenance: map[string]bool{"a": true}}, false, LastKept},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.c.IsEmpty(); got != tt.empty {
				t.Errorf("IsEmpty() = %v, want %v", got, tt.empty)
			}
			if tt.c == nil {
				return
			}
			if got := LastOf(tt.c); got != tt.last {
				t.Errorf("LastOf() = %v, want %v", got, tt.last)
			}
		})
	}
	if LastOf(nil) != LastNone {
		t.Error("LastOf(nil) is not LastNone")
	}
}
