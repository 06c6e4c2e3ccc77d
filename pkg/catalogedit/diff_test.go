package catalogedit

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// applyDiff applies a unified diff (as UnifiedDiff writes it) to old.
func applyDiff(t *testing.T, old, diff string) string {
	t.Helper()
	lines := splitLines([]byte(diff))
	if len(lines) < 2 {
		t.Fatalf("short diff %q", diff)
	}
	src := splitLines([]byte(old))
	var out []string
	pos := 0 // next source line
	i := 2
	for i < len(lines) {
		h := lines[i]
		if !strings.HasPrefix(h, "@@ -") {
			t.Fatalf("expected a hunk header, got %q", h)
		}
		var oStart int
		f := strings.Fields(h)
		os := strings.SplitN(strings.TrimPrefix(f[1], "-"), ",", 2)
		oStart, _ = strconv.Atoi(os[0])
		oCount := 1
		if len(os) == 2 {
			oCount, _ = strconv.Atoi(os[1])
		}
		start := oStart - 1
		if oCount == 0 {
			start = oStart
		}
		if start < pos {
			t.Fatalf("hunk %q goes back", h)
		}
		out = append(out, src[pos:start]...)
		pos = start
		i++
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@ ") {
			l := lines[i]
			i++
			noNL := i < len(lines) && lines[i] == "\\ No newline at end of file\n"
			text := l[1:]
			if noNL {
				text = strings.TrimSuffix(text, "\n")
				i++
			}
			switch l[0] {
			case ' ':
				if pos >= len(src) || src[pos] != text {
					t.Fatalf("context %q does not match line %d %q", text, pos+1, at(src, pos))
				}
				out = append(out, text)
				pos++
			case '-':
				if pos >= len(src) || src[pos] != text {
					t.Fatalf("removed %q does not match line %d %q", text, pos+1, at(src, pos))
				}
				pos++
			case '+':
				out = append(out, text)
			default:
				t.Fatalf("bad diff line %q", l)
			}
		}
	}
	out = append(out, src[pos:]...)
	return strings.Join(out, "")
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "<end>"
}

// edits applies splices to old and returns the change.
func edits(old string, sp []splice) FileChange {
	fe := &fileEdit{data: []byte(old), splices: sp}
	data, regions, err := fe.result()
	if err != nil {
		panic(err)
	}
	return FileChange{Display: "f", Action: ActionModified, Old: []byte(old), New: data, regions: regions}
}

func TestUnifiedDiff(t *testing.T) {
	old := "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\n"
	ch := edits(old, []splice{{start: 2, end: 4, text: []byte("B\n")}, {start: 20, end: 20, text: []byte("x\n")}})
	got := UnifiedDiff(ch)
	want := `--- a/f
+++ b/f
@@ -1,5 +1,5 @@
 a
-b
+B
 c
 d
 e
@@ -8,5 +8,6 @@
 h
 i
 j
+x
 k
 l
`
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if applied := applyDiff(t, old, got); applied != string(ch.New) {
		t.Errorf("applied:\n%s", applied)
	}
	created := UnifiedDiff(FileChange{Display: "n", Action: ActionCreated, New: []byte("x\ny")})
	if created != "--- /dev/null\n+++ b/n\n@@ -0,0 +1,2 @@\n+x\n+y\n\\ No newline at end of file\n" {
		t.Errorf("created: %q", created)
	}
}

// FuzzUnifiedDiff checks that the diff of any splices applies back.
func FuzzUnifiedDiff(f *testing.F) {
	f.Add("a\nb\nc\n", uint16(2), uint8(2), "X\n", uint16(5), uint8(0), "y\nz\n")
	f.Add("one\ntwo", uint16(0), uint8(8), "", uint16(7), uint8(0), "\nthree")
	f.Fuzz(func(t *testing.T, old string, s1 uint16, l1 uint8, t1 string, s2 uint16, l2 uint8, t2 string) {
		if len(old) > 2000 {
			return
		}
		a := int(s1) % (len(old) + 1)
		ae := min(a+int(l1), len(old))
		b := int(s2) % (len(old) + 1)
		be := min(b+int(l2), len(old))
		sp := []splice{{start: a, end: ae, text: []byte(t1), seq: 1}}
		if b >= ae {
			sp = append(sp, splice{start: b, end: be, text: []byte(t2), seq: 2})
		}
		ch := edits(old, sp)
		d := UnifiedDiff(ch)
		if applied := applyDiff(t, old, d); applied != string(ch.New) {
			t.Fatalf("diff does not apply:\n%s\nold %q\nnew %q\ngot %q", d, old, ch.New, applied)
		}
		if string(ch.New) == old && strings.Contains(d, "@@") {
			t.Fatalf("no change, yet a hunk:\n%s", d)
		}
	})
}

var _ = fmt.Sprint
