package validate

import (
	"encoding/json"
	"testing"
)

func TestShapeOf(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"Success/scalars", `{"a":"x","b":1.5e3,"c":true,"d":null,"e":false,"f":-12}`, `{"a":"","b":0.5,"c":true,"d":null,"e":false,"f":0}`},
		{"Success/schema kept", `{"schema":"olm.bundle","name":"x","reference":{"schema":"olm.channel","name":"y"}}`, `{"schema":"olm.bundle","name":"","reference":{"schema":"olm.channel","name":""}}`},
		{"Success/arrays collapse", `{"skips":["a","b","c"],"e":[{"n":"a"},{"n":"b","r":"c"},{"n":"d","r":"e"},{"n":"f"}]}`, `{"skips":[""],"e":[{"n":"","r":""},{"n":""}]}`},
		{"Success/mixed array", `[1,"a",2,2,"b\"c"]`, `["",0]`},
		{"Success/empty", `{"a":[],"b":{}}`, `{"a":[],"b":{}}`},
		{"Error/spaces", `{"a": 1}`, ``},
		{"Error/truncated", `{"a":"x`, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := shapeOf([]byte(tt.in))
			if tt.want == "" {
				if ok {
					t.Fatalf("shapeOf() = %s, want failure", got)
				}
				return
			}
			if !ok || string(got) != tt.want {
				t.Fatalf("shapeOf() = %s, %v, want %s", got, ok, tt.want)
			}
		})
	}
}

// FuzzShapeOf checks that shapeOf never panics and that every shape it
// returns is valid JSON, and a fixed point.
func FuzzShapeOf(f *testing.F) {
	for _, s := range []string{`{"a":"x","b":[1,2,{"c":null}]}`, `[]`, `"\\"`, `{"schema":"olm.bundle"}`, `[1.5,1,"a"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		shape, ok := shapeOf([]byte(in))
		if !ok {
			return
		}
		if !json.Valid(shape) {
			t.Fatalf("shapeOf(%q) = %q, not JSON", in, shape)
		}
		again, ok := shapeOf(shape)
		if !ok || string(again) != string(shape) {
			t.Fatalf("shapeOf(shapeOf(%q)) = %q, want %q", in, again, shape)
		}
	})
}
