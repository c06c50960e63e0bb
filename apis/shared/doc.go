// Package shared holds API types that several kinds embed in their specs.
// It is no API group of its own: each kind serves these types in its own
// group and version.
//
// +kubebuilder:object:generate=true
package shared
