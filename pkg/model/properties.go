package model

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/opmkit/opm/pkg/declcfg"
	"github.com/opmkit/opm/pkg/property"
)

// parseProperties is property.Parse with the same verdicts and messages,
// except that olm.bundle.object data is checked without being kept: the
// model's PropertiesP.BundleObjects have a nil Data (a catalog's bundle
// objects are most of its bytes; decode them with declcfg's
// Bundle.LoadObjects, or read Bundle.Objects, when needed).
func parseProperties(props []property.Property) (*property.Properties, error) {
	var out property.Properties
	for i, p := range props {
		if p.Type == property.TypeBundleObject {
			if err := checkBundleObject(p.Value); err != nil {
				return nil, &property.ParseError{Index: i, Type: p.Type, Err: err}
			}
			out.BundleObjects = append(out.BundleObjects, property.BundleObject{})
			continue
		}
		one, err := property.Parse([]property.Property{p})
		if err != nil {
			var pe *property.ParseError
			if errors.As(err, &pe) {
				return nil, &property.ParseError{Index: i, Type: pe.Type, Err: pe.Err}
			}
			return nil, err
		}
		out.Packages = append(out.Packages, one.Packages...)
		out.PackagesRequired = append(out.PackagesRequired, one.PackagesRequired...)
		out.GVKs = append(out.GVKs, one.GVKs...)
		out.GVKsRequired = append(out.GVKsRequired, one.GVKsRequired...)
		out.CSVMetadatas = append(out.CSVMetadatas, one.CSVMetadatas...)
		out.Channels = append(out.Channels, one.Channels...)
		out.Others = append(out.Others, one.Others...)
	}
	return &out, nil
}

var (
	bundleObjectPrefix = []byte(`{"data":"`)
	bundleObjectSuffix = []byte(`"}`)
)

// checkBundleObject reports the error json.Unmarshal would for decoding
// value into a property.BundleObject, decoding the common compact form
// {"data":"<base64>"} in chunks without keeping the bytes.
func checkBundleObject(value []byte) error {
	if bytes.HasPrefix(value, bundleObjectPrefix) && bytes.HasSuffix(value, bundleObjectSuffix) && len(value) >= len(bundleObjectPrefix)+len(bundleObjectSuffix) {
		data := value[len(bundleObjectPrefix) : len(value)-len(bundleObjectSuffix)]
		// base64 decoding rejects quotes and backslashes but skips
		// newlines, which JSON would have had to escape.
		if bytes.IndexByte(data, '\n') < 0 && bytes.IndexByte(data, '\r') < 0 && checkBase64(data) == nil {
			return nil
		}
	}
	var v property.BundleObject
	return json.Unmarshal(value, &v)
}

// checkBase64 decodes s in chunks; any error sends the caller to the slow
// path, which words it as encoding/json does.
func checkBase64(s []byte) error {
	const chunk = 32 << 10 // a multiple of 4
	var buf [chunk / 4 * 3]byte
	for off := 0; off < len(s); off += chunk {
		end := min(off+chunk, len(s))
		part := s[off:end]
		if end < len(s) && bytes.IndexByte(part, '=') >= 0 {
			return errors.New("padding inside the data")
		}
		if _, err := base64.StdEncoding.Decode(buf[:], part); err != nil {
			return err
		}
	}
	return nil
}

// parsedProps is the result of parseProperties for one bundle.
type parsedProps struct {
	props *property.Properties
	err   error
}

// parseAllProperties parses the properties of every bundle, in parallel.
func parseAllProperties(bundles []declcfg.Bundle) []parsedProps {
	out := make([]parsedProps, len(bundles))
	workers := min(runtime.GOMAXPROCS(0), len(bundles))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(bundles) {
					return
				}
				p, err := parseProperties(bundles[i].Properties)
				out[i] = parsedProps{p, err}
			}
		}()
	}
	wg.Wait()
	return out
}
