package crd

import (
	"regexp"
	"strconv"
	"strings"
)

var kubeVersionRE = regexp.MustCompile(`^v([1-9][0-9]*)(?:(alpha|beta)([1-9][0-9]*))?$`)

// CompareVersionNames orders version names as Kubernetes orders API
// versions (v1alpha1 < v1beta1 < v1 < v2alpha1 < v2): negative when a
// comes before b. Names that are not Kubernetes-like versions come first,
// in reverse lexical order, as apimachinery sorts them.
func CompareVersionNames(a, b string) int {
	if a == b {
		return 0
	}
	am, at, an, aok := parseKubeVersion(a)
	bm, bt, bn, bok := parseKubeVersion(b)
	switch {
	case !aok && !bok:
		return strings.Compare(b, a)
	case !aok:
		return -1
	case !bok:
		return 1
	}
	if at != bt {
		return at - bt
	}
	if am != bm {
		return am - bm
	}
	return an - bn
}

// parseKubeVersion splits v1beta2 into 1, beta (1), 2. The level is 0 for
// alpha, 1 for beta and 2 for a GA version.
func parseKubeVersion(v string) (major, level, minor int, ok bool) {
	m := kubeVersionRE.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, 0, false
	}
	major, err := strconv.Atoi(m[1])
	if err != nil {
		return 0, 0, 0, false
	}
	switch m[2] {
	case "alpha":
		level = 0
	case "beta":
		level = 1
	default:
		return major, 2, 0, true
	}
	minor, err = strconv.Atoi(m[3])
	if err != nil {
		return 0, 0, 0, false
	}
	return major, level, minor, true
}
