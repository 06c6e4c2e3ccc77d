package property

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParse feeds arbitrary values to every known property type and to an
// unknown one: Parse must not panic, it must accept a value exactly when
// encoding/json accepts it for the type, and what it accepts must build
// back into a property that parses again.
func FuzzParse(f *testing.F) {
	types := []string{TypePackage, TypePackageRequired, TypeGVK, TypeGVKRequired, TypeBundleObject, TypeCSVMetadata, TypeChannel, "olm.unknown"}
	for _, s := range []string{
		`{"packageName":"p","version":"1.0.0"}`, `{"group":"g","kind":"K","version":"v1"}`,
		`{"data":"aGVsbG8="}`, `{"channelName":"c"}`, `null`, ``, `"x"`, `[1]`, `{"packageName":5}`,
		`{"data":"not base64"}`, `{"Group":"G","KIND":"k"}`, `{"a":{"b":[1,2,{"c":null}]}}`,
	} {
		for i := range types {
			f.Add(uint8(i), []byte(s))
		}
	}
	f.Fuzz(func(t *testing.T, ti uint8, value []byte) {
		typ := types[int(ti)%len(types)]
		props, err := Parse([]Property{{Type: typ, Value: value}})
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) || pe.Index != 0 || pe.Type != typ {
				t.Fatalf("error %v is not a ParseError of property 0", err)
			}
			return
		}
		if !json.Valid(value) {
			t.Fatalf("accepted invalid JSON %q as %s", value, typ)
		}
		var v any
		switch typ {
		case TypePackage:
			v = props.Packages[0]
		case TypePackageRequired:
			v = props.PackagesRequired[0]
		case TypeGVK:
			v = props.GVKs[0]
		case TypeGVKRequired:
			v = props.GVKsRequired[0]
		case TypeBundleObject:
			v = props.BundleObjects[0]
		case TypeChannel:
			v = props.Channels[0]
		default:
			return
		}
		p, err := Build(v)
		if err != nil {
			t.Fatalf("Build(%#v): %v", v, err)
		}
		if _, err := Parse([]Property{p}); err != nil {
			t.Fatalf("built %s does not parse: %v", p.Value, err)
		}
	})
}
