package cmdutil

import (
	"fmt"
	"strconv"
	"strings"
)

// SizeValue is a pflag.Value holding a size in bytes, written as a number
// of bytes or with a binary suffix: "1048576", "512KiB", "256MiB", "1GiB"
// (also "Ki", "Mi", "Gi"). "0" means no limit.
type SizeValue struct{ N *int64 }

var sizeUnits = []struct {
	suffix string
	shift  uint
}{{"KiB", 10}, {"MiB", 20}, {"GiB", 30}, {"Ki", 10}, {"Mi", 20}, {"Gi", 30}, {"B", 0}}

func (v SizeValue) String() string {
	if v.N == nil {
		return "0"
	}
	n := *v.N
	for _, u := range []struct {
		suffix string
		shift  uint
	}{{"GiB", 30}, {"MiB", 20}, {"KiB", 10}} {
		if n != 0 && n%(1<<u.shift) == 0 {
			return strconv.FormatInt(n>>u.shift, 10) + u.suffix
		}
	}
	return strconv.FormatInt(n, 10)
}

// Set parses s.
func (v SizeValue) Set(s string) error {
	num, shift := strings.TrimSpace(s), uint(0)
	for _, u := range sizeUnits {
		if strings.HasSuffix(num, u.suffix) {
			num, shift = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return fmt.Errorf("invalid size %q: want a number of bytes, optionally with KiB, MiB or GiB", s)
	}
	*v.N = n << shift
	return nil
}

// Type names the value in help.
func (SizeValue) Type() string { return "size" }
