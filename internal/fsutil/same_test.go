package fsutil

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestSameContent(t *testing.T) {
	big := strings.Repeat("x", 200<<10)
	for _, tc := range []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"abc", "abc", true},
		{"abc", "abd", false},
		{"abc", "abcd", false},
		{big, big, true},
		{big, big + "y", false},
		{big + "y", big, false},
	} {
		got, err := SameContent(context.Background(), strings.NewReader(tc.a), bytes.NewReader([]byte(tc.b)))
		if err != nil || got != tc.want {
			t.Errorf("%d and %d bytes: %v %v, want %v", len(tc.a), len(tc.b), got, err, tc.want)
		}
	}
}
