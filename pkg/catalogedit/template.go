package catalogedit

import (
	"bytes"
	"fmt"

	"github.com/opmkit/opm/pkg/declcfg"
)

// Basic templates (olm.template.basic): one document whose entries are FBC
// blobs, bundles being stubs that name only an image. Editing one edits
// its entries as blobs; bundle stubs carry no package, name or version
// (they get them when the template is rendered), so operations that need
// them say so.

// loadTemplate reads a basic template into a config whose blobs are its
// entries, positioned at their items.
func loadTemplate(data []byte, name string) (*declcfg.DeclarativeConfig, *fileEdit, error) {
	layout, err := ScanTemplate(data)
	if err != nil {
		return nil, nil, err
	}
	cfg := &declcfg.DeclarativeConfig{}
	for i, s := range layout.Blobs {
		var j []byte
		if layout.Format == FormatJSON {
			j = data[s.Start:s.End]
		} else {
			v, err := valueFromYAML(data[s.Start:s.End])
			if err != nil {
				return nil, nil, fmt.Errorf("line %d: %w", s.Line, err)
			}
			a, ok := v.([]any)
			if !ok || len(a) != 1 {
				return nil, nil, fmt.Errorf("line %d: cannot read entry %d", s.Line, i)
			}
			var buf bytes.Buffer
			if err := writeJSON(&buf, a[0], jsonStyle{compact: true, kvSep: ":", itemSep: ","}, ""); err != nil {
				return nil, nil, err
			}
			j = buf.Bytes()
		}
		one, err := declcfg.LoadReader(bytes.NewReader(j), name)
		if err != nil {
			return nil, nil, fmt.Errorf("line %d: %w", s.Line, declcfgMessage(err))
		}
		pos := declcfg.Position{File: name, Line: s.Line, Column: s.Column}
		setPos(one, pos)
		cfg.Merge(one)
	}
	fe := &fileEdit{name: name, data: data, layout: layout}
	return cfg, fe, nil
}

func declcfgMessage(err error) error {
	return fmt.Errorf("%s", declcfg.UpstreamMessage(err))
}

func setPos(cfg *declcfg.DeclarativeConfig, pos declcfg.Position) {
	for i := range cfg.Packages {
		cfg.Packages[i].Pos = pos
	}
	for i := range cfg.Channels {
		cfg.Channels[i].Pos = pos
	}
	for i := range cfg.Bundles {
		cfg.Bundles[i].Pos = pos
	}
	for i := range cfg.Deprecations {
		cfg.Deprecations[i].Pos = pos
	}
	for i := range cfg.Others {
		cfg.Others[i].Pos = pos
	}
}
