package k8sname

import (
	"slices"
	"strings"
	"testing"
)

// The messages are apimachinery's, word for word.
func TestMessages(t *testing.T) {
	for _, tc := range []struct {
		name string
		fn   func(string) []string
		in   string
		want []string
	}{
		{"label ok", IsDNS1123Label, "my-name", nil},
		{"label dots", IsDNS1123Label, "a.b", []string{"must not contain dots"}},
		{"label upper", IsDNS1123Label, "A", []string{"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"}},
		{"subdomain ok", IsDNS1123Subdomain, "example.com", nil},
		{"subdomain long", IsDNS1123Subdomain, strings.Repeat("a", 254), []string{"must be no more than 253 characters"}},
		{"1035 digit", IsDNS1035Label, "1abc", []string{"a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')"}},
		{"label value empty", IsValidLabelValue, "", nil},
		{"qualified ok", IsQualifiedName, "example.com/MyName", nil},
		{"qualified empty prefix", IsQualifiedName, "/x", []string{"prefix part must be non-empty"}},
		{"qualified two slashes", IsQualifiedName, "a/b/c", []string{"a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}},
	} {
		if got := tc.fn(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %q:\n got %q\nwant %q", tc.name, tc.in, got, tc.want)
		}
	}
}
