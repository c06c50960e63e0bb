package redisadmin

import (
	"fmt"
	"testing"
)

func TestListNames(t *testing.T) {
	many := make([]string, MaxListedNodes+5)
	for i := range many {
		many[i] = fmt.Sprintf("node-%02d", i)
	}
	for _, tc := range []struct {
		name  string
		names []string
		want  string
	}{
		{"none", nil, ""},
		{"one", []string{"node-3"}, "node-3"},
		{"in the order given", []string{"node-4", "node-3"}, "node-4, node-3"},
		{"at the bound", many[:MaxListedNodes], "node-00, node-01, node-02, node-03, node-04, node-05, node-06, node-07, node-08, node-09"},
		{"past the bound, counted", many, "node-00, node-01, node-02, node-03, node-04, node-05, node-06, node-07, node-08, node-09, and 5 more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ListNames(tc.names); got != tc.want {
				t.Errorf("ListNames(%v) = %q, want %q", tc.names, got, tc.want)
			}
		})
	}
}
