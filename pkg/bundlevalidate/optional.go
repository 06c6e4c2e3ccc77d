package bundlevalidate

import (
	"bytes"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/opmkit/opm/internal/k8sname"
)

// OptionalValidator is a validator run only when selected.
type OptionalValidator struct {
	Name string
	// Labels are what selectors match: name=<Name>, and suite=operatorframework
	// for operator-sdk's suite.
	Labels map[string]string
	// Description is operator-sdk's description (opm's for bundle-objects).
	Description string
	run         func(*checker)
}

// optionalValidators are the optional validators, in the order
// operator-sdk lists and runs them; bundle-objects (operator-registry's)
// comes last.
var optionalValidators = []OptionalValidator{
	{Name: "operatorhubv2", Labels: map[string]string{"name": "operatorhubv2", "suite": "operatorframework"},
		Description: "OperatorHub.io metadata validation. ", run: (*checker).checkOperatorHubV2},
	{Name: "capabilities", Labels: map[string]string{"name": "capabilities", "suite": "operatorframework"},
		Description: "OperatorHub.io capabilities metadata validation. ", run: (*checker).checkCapabilities},
	{Name: "categories", Labels: map[string]string{"name": "categories", "suite": "operatorframework"},
		Description: "OperatorHub.io categories metadata validation. ", run: (*checker).checkCategories},
	{Name: "operatorhub", Labels: map[string]string{"name": "operatorhub"},
		Description: "Deprecated OperatorHub.io metadata validation. ", run: (*checker).checkOperatorHub},
	{Name: "alpha-deprecated-apis", Labels: map[string]string{"name": "alpha-deprecated-apis", "suite": "operatorframework"},
		Description: "(stage: alpha) Deprecated APIs bundle validation. This validator can help you out verify if your bundle contains manifests which uses deprecated APIs. More info: https://kubernetes.io/docs/reference/using-api/deprecation-guide/",
		run:         (*checker).checkDeprecatedAPIs},
	{Name: "good-practices", Labels: map[string]string{"name": "good-practices", "suite": "operatorframework"},
		Description: "Good Practices bundle validation. This validator validates the bundle against criteria and suggestions defined as good practices for bundles under the operator-framework solutions. More info: https://sdk.operatorframework.io/docs/best-practices/.",
		run:         (*checker).checkGoodPractices},
	{Name: "multiarch", Labels: map[string]string{"name": "multiarch"},
		Description: "(Alpha) Multiple Architectures bundle validation. This validator validates the bundle against criteria defined to configure the support for multiple architectures. More info: https://olm.operatorframework.io/docs/advanced-tasks/ship-operator-supporting-multiarch/.",
		run:         (*checker).checkMultiArch},
	{Name: "bundle-objects", Labels: map[string]string{"name": "bundle-objects"},
		Description: "Bundle objects validation (operator-registry's): PodDisruptionBudgets, PriorityClasses and RBAC rules that could impact cluster stability.",
		run:         (*checker).checkBundleObjects},
}

// OptionalValidators returns the optional validators.
func OptionalValidators() []OptionalValidator { return optionalValidators }

// WriteOptionalList writes the optional validators as operator-sdk's
// --list-optional does: a table of names, labels and descriptions.
func WriteOptionalList(w io.Writer) error {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 8, 4, 4, ' ', 0)
	fmt.Fprintf(tw, "NAME\tLABELS\tDESCRIPTION\n")
	for _, v := range optionalValidators {
		labels := []string{"name=" + v.Labels["name"]}
		for _, k := range sortedLabelKeys(v.Labels) {
			if k != "name" {
				labels = append(labels, k+"="+v.Labels[k])
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Name, labels[0], v.Description)
		for _, l := range labels[1:] {
			fmt.Fprintf(tw, "\t%s\t\n", l)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}

func sortedLabelKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Selector is a label selector (Kubernetes' syntax): requirements joined
// by commas, each "key=value", "key==value", "key!=value", "key in
// (a,b)", "key notin (a,b)", "key" or "!key".
type Selector struct {
	text string
	reqs []requirement
}

type requirement struct {
	key    string
	op     string // "=", "!=", "in", "notin", "exists", "!"
	values []string
}

// ParseSelector parses a label selector; "" selects nothing.
func ParseSelector(s string) (*Selector, error) {
	sel := &Selector{text: strings.TrimSpace(s)}
	if sel.text == "" {
		return sel, nil
	}
	for _, part := range splitRequirements(sel.text) {
		r, err := parseRequirement(strings.TrimSpace(part))
		if err != nil {
			return nil, fmt.Errorf("couldn't parse the selector string %q: %w", s, err)
		}
		sel.reqs = append(sel.reqs, r)
	}
	return sel, nil
}

// splitRequirements splits at the commas outside parentheses.
func splitRequirements(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i, r := range s {
		switch r {
		case '(':
			depth++
		case ')':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

func parseRequirement(p string) (requirement, error) {
	if p == "" {
		return requirement{}, fmt.Errorf("empty requirement")
	}
	if strings.HasPrefix(p, "!") {
		k := strings.TrimSpace(p[1:])
		if !validLabelKey(k) {
			return requirement{}, fmt.Errorf("invalid label key %q", k)
		}
		return requirement{key: k, op: "!"}, nil
	}
	for _, op := range []string{"!=", "==", "="} {
		if i := strings.Index(p, op); i >= 0 {
			k, v := strings.TrimSpace(p[:i]), strings.TrimSpace(p[i+len(op):])
			if !validLabelKey(k) {
				return requirement{}, fmt.Errorf("invalid label key %q", k)
			}
			if op == "==" {
				op = "="
			}
			return requirement{key: k, op: op, values: []string{v}}, nil
		}
	}
	fields := strings.Fields(p)
	if len(fields) == 1 {
		if !validLabelKey(fields[0]) {
			return requirement{}, fmt.Errorf("invalid label key %q", fields[0])
		}
		return requirement{key: fields[0], op: "exists"}, nil
	}
	k := fields[0]
	rest := strings.TrimSpace(strings.TrimPrefix(p, k))
	for _, op := range []string{"notin", "in"} {
		if !strings.HasPrefix(rest, op) {
			continue
		}
		list := strings.TrimSpace(strings.TrimPrefix(rest, op))
		if !strings.HasPrefix(list, "(") || !strings.HasSuffix(list, ")") {
			return requirement{}, fmt.Errorf("expected a parenthesized list after %s", op)
		}
		var values []string
		for _, v := range strings.Split(list[1:len(list)-1], ",") {
			values = append(values, strings.TrimSpace(v))
		}
		return requirement{key: k, op: op, values: values}, nil
	}
	return requirement{}, fmt.Errorf("unexpected %q", p)
}

func validLabelKey(k string) bool { return k != "" && len(k8sname.IsQualifiedName(k)) == 0 }

// Matches reports whether labels satisfy every requirement; an empty
// selector matches nothing (no optional validator runs).
func (s *Selector) Matches(labels map[string]string) bool {
	if s == nil || len(s.reqs) == 0 {
		return false
	}
	for _, r := range s.reqs {
		v, ok := labels[r.key]
		switch r.op {
		case "=":
			if !ok || v != r.values[0] {
				return false
			}
		case "!=":
			if ok && v == r.values[0] {
				return false
			}
		case "in":
			if !ok || !contains(r.values, v) {
				return false
			}
		case "notin":
			if ok && contains(r.values, v) {
				return false
			}
		case "exists":
			if !ok {
				return false
			}
		case "!":
			if ok {
				return false
			}
		}
	}
	return true
}

// Selects reports whether the selector selects the optional validator
// named name.
func (s *Selector) Selects(name string) bool {
	for _, v := range optionalValidators {
		if v.Name == name {
			return s.Matches(v.Labels)
		}
	}
	return false
}

// String returns the selector as given.
func (s *Selector) String() string { return s.text }

// Empty reports a selector without requirements.
func (s *Selector) Empty() bool { return s == nil || len(s.reqs) == 0 }

// CheckMatches returns operator-sdk's error for a selector that selects
// no validator.
func (s *Selector) CheckMatches() error {
	if s.Empty() {
		return nil
	}
	for _, v := range optionalValidators {
		if s.Matches(v.Labels) {
			return nil
		}
	}
	return fmt.Errorf("selector %q does not match any validator labels", s.text)
}
