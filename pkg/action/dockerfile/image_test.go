package dockerfile

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestImageSettings checks that the exported entrypoint and command are
// those Render writes, and that a scratch base gets neither.
func TestImageSettings(t *testing.T) {
	js := func(v []string) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return strings.ReplaceAll(string(b), `","`, `", "`)
	}
	text := Render(Options{BaseImage: DefaultImage, BuilderImage: DefaultImage, IndexDir: "catalog"})
	for _, want := range []string{"ENTRYPOINT " + js(Entrypoint()) + "\n", "CMD " + js(Cmd()) + "\n", "LABEL " + ConfigsLocationLabel + "=/configs\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("the Dockerfile does not hold %q:\n%s", want, text)
		}
	}
	scratch := Render(Options{BaseImage: "scratch", BuilderImage: DefaultImage, IndexDir: "catalog"})
	if strings.Contains(scratch, "ENTRYPOINT") || strings.Contains(scratch, "\nCMD") {
		t.Errorf("a scratch base gets an entrypoint or a command:\n%s", scratch)
	}
}
