// Package k8sname checks names as Kubernetes does (k8s.io/apimachinery's
// util/validation) and returns its messages word for word: the API server,
// OLM and operator-sdk's validators print them, and users search for them.
package k8sname

import (
	"fmt"
	"regexp"
	"strings"
)

const (
	qnameCharFmt        = "[A-Za-z0-9]"
	qnameExtCharFmt     = "[-A-Za-z0-9_.]"
	qualifiedNameFmt    = "(" + qnameCharFmt + qnameExtCharFmt + "*)?" + qnameCharFmt
	qualifiedNameErrMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	labelValueFmt       = "(" + qualifiedNameFmt + ")?"
	labelValueErrMsg    = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	dns1123LabelFmt     = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	dns1123LabelErrMsg  = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
	dns1123SubdomainFmt = dns1123LabelFmt + "(\\." + dns1123LabelFmt + ")*"
	dns1123SubdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	dns1035LabelFmt     = "[a-z]([-a-z0-9]*[a-z0-9])?"
	dns1035LabelMsg     = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"

	labelMaxLength     = 63
	subdomainMaxLength = 253
)

var (
	qualifiedNameRegexp    = regexp.MustCompile("^" + qualifiedNameFmt + "$")
	labelValueRegexp       = regexp.MustCompile("^" + labelValueFmt + "$")
	dns1123LabelRegexp     = regexp.MustCompile("^" + dns1123LabelFmt + "$")
	dns1123SubdomainRegexp = regexp.MustCompile("^" + dns1123SubdomainFmt + "$")
	dns1035LabelRegexp     = regexp.MustCompile("^" + dns1035LabelFmt + "$")
)

// MaxLenError is Kubernetes' message for a value over n characters.
func MaxLenError(n int) string { return fmt.Sprintf("must be no more than %d characters", n) }

func regexError(msg, format string, examples ...string) string {
	if len(examples) == 0 {
		return msg + " (regex used for validation is '" + format + "')"
	}
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + format + "')"
}

// IsDNS1123Label returns why v is not a lowercase RFC 1123 label, or nil.
func IsDNS1123Label(v string) []string {
	var errs []string
	if len(v) > labelMaxLength {
		errs = append(errs, MaxLenError(labelMaxLength))
	}
	if !dns1123LabelRegexp.MatchString(v) {
		if dns1123SubdomainRegexp.MatchString(v) {
			errs = append(errs, "must not contain dots")
		} else {
			errs = append(errs, regexError(dns1123LabelErrMsg, dns1123LabelFmt, "my-name", "123-abc"))
		}
	}
	return errs
}

// IsDNS1123Subdomain returns why v is not a lowercase RFC 1123 subdomain,
// or nil.
func IsDNS1123Subdomain(v string) []string {
	var errs []string
	if len(v) > subdomainMaxLength {
		errs = append(errs, MaxLenError(subdomainMaxLength))
	}
	if !dns1123SubdomainRegexp.MatchString(v) {
		errs = append(errs, regexError(dns1123SubdomainMsg, dns1123SubdomainFmt, "example.com"))
	}
	return errs
}

// IsDNS1035Label returns why v is not a DNS-1035 label, or nil.
func IsDNS1035Label(v string) []string {
	var errs []string
	if len(v) > labelMaxLength {
		errs = append(errs, MaxLenError(labelMaxLength))
	}
	if !dns1035LabelRegexp.MatchString(v) {
		errs = append(errs, regexError(dns1035LabelMsg, dns1035LabelFmt, "my-name", "abc-123"))
	}
	return errs
}

// IsValidLabelValue returns why v is not a label value, or nil.
func IsValidLabelValue(v string) []string {
	var errs []string
	if len(v) > labelMaxLength {
		errs = append(errs, MaxLenError(labelMaxLength))
	}
	if !labelValueRegexp.MatchString(v) {
		errs = append(errs, regexError(labelValueErrMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return errs
}

// IsQualifiedName returns why v is not a qualified name (a label key, an
// annotation key), or nil.
func IsQualifiedName(v string) []string {
	var errs []string
	parts := strings.Split(v, "/")
	var name string
	switch len(parts) {
	case 1:
		name = parts[0]
	case 2:
		var prefix string
		prefix, name = parts[0], parts[1]
		if prefix == "" {
			errs = append(errs, "prefix part must be non-empty")
		} else if msgs := IsDNS1123Subdomain(prefix); len(msgs) != 0 {
			for _, m := range msgs {
				errs = append(errs, "prefix part "+m)
			}
		}
	default:
		return append(errs, "a qualified name "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc")+
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")
	}
	if name == "" {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > 63 {
		errs = append(errs, "name part "+MaxLenError(labelMaxLength))
	}
	if !qualifiedNameRegexp.MatchString(name) {
		errs = append(errs, "name part "+regexError(qualifiedNameErrMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return errs
}
