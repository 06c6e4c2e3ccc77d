// Package compose composes file-based catalogs: it compares two catalogs
// ([Diff]), extracts a subset that is itself a valid catalog ([Filter]) and
// combines several into one ([Merge]).
//
// Upgrade graphs are reasoned about with pkg/graph, which holds the one
// implementation of OLM's channel rules (heads, replaces chains, classic
// and v1 upgrade walks); results are checked with pkg/model, upstream's
// validation rules.
package compose
