// Package stringmaps holds what labels and annotations need of maps.
package stringmaps

import "maps"

// Overlay returns base with top's entries on top, in new memory, so that
// neither input is changed; nil when both are empty, so that a field unset
// on both sides stays unset.
func Overlay(base, top map[string]string) map[string]string {
	if len(base) == 0 && len(top) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(top))
	maps.Copy(out, base)
	maps.Copy(out, top)
	return out
}
