package bundlevalidate

import (
	"sort"
	"strconv"
	"strings"
)

// goValue writes a decoded JSON value as Go's %v prints the
// map[string]interface{} of an unstructured object (keys sorted, strings
// bare, nil as <nil>), which upstream puts in some messages.
func goValue(sb *strings.Builder, v any, depth int) {
	if depth > 100 {
		sb.WriteString("...")
		return
	}
	switch t := v.(type) {
	case nil:
		sb.WriteString("<nil>")
	case string:
		sb.WriteString(t)
	case bool:
		sb.WriteString(strconv.FormatBool(t))
	case int64:
		sb.WriteString(strconv.FormatInt(t, 10))
	case float64:
		sb.WriteString(strconv.FormatFloat(t, 'g', -1, 64))
	case []any:
		sb.WriteByte('[')
		for i, e := range t {
			if i > 0 {
				sb.WriteByte(' ')
			}
			goValue(sb, e, depth+1)
		}
		sb.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		sb.WriteString("map[")
		for i, k := range keys {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(k)
			sb.WriteByte(':')
			goValue(sb, t[k], depth+1)
		}
		sb.WriteByte(']')
	default:
		sb.WriteString("?")
	}
}

// unstructuredString is %v of a *unstructured.Unstructured holding obj.
func unstructuredString(obj map[string]any) string {
	var sb strings.Builder
	sb.WriteString("&{")
	goValue(&sb, obj, 0)
	sb.WriteString("}")
	return sb.String()
}
