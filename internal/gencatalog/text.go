package gencatalog

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"strings"
)

// words is the vocabulary of generated prose: the kind of words operator
// descriptions are made of.
var words = strings.Fields(`
operator cluster kubernetes openshift deploy deployment manage managed lifecycle
upgrade automatic automated backup restore storage volume persistent database
replica replicas scaling horizontal vertical monitoring metrics prometheus alert
alerting dashboard grafana logging tracing network service mesh ingress route
certificate tls secret configuration config custom resource definition controller
reconcile reconciliation namespace tenant multi single high availability failover
disaster recovery snapshot policy security compliance audit role binding account
permission api server webhook admission validation mutation status condition ready
healthy degraded progressing available version release channel stable candidate
fast preview channel image registry pull digest tag bundle catalog index package
install installation uninstall cleanup finalizer owner reference label annotation
selector affinity toleration node pod container sidecar init resource limit request
cpu memory quota autoscaler event stream queue topic broker message cache object
bucket gateway proxy load balancer endpoint port protocol cloud native platform
hybrid edge workload batch job schedule cron pipeline build source git repository
provides enables supports allows simplifies handles exposes integrates configures
the a an of for with and to in on by from across within using over each every
`)

func sentence(r *rand.Rand, minWords, maxWords int) string {
	n := minWords + r.IntN(maxWords-minWords+1)
	var b strings.Builder
	for i := 0; i < n; i++ {
		w := words[r.IntN(len(words))]
		if i == 0 {
			w = strings.ToUpper(w[:1]) + w[1:]
		} else {
			b.WriteByte(' ')
		}
		b.WriteString(w)
	}
	b.WriteByte('.')
	return b.String()
}

func paragraph(r *rand.Rand, sentences int) string {
	s := make([]string, sentences)
	for i := range s {
		s[i] = sentence(r, 6, 18)
	}
	return strings.Join(s, " ")
}

// markdown returns a Markdown document of about size bytes, in the shape of a
// CSV or package description: a title, sections, bullet lists, a code block.
func markdown(r *rand.Rand, title string, size int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "## %s\n\n%s\n\n", title, paragraph(r, 3))
	sections := []string{"Overview", "Features", "Prerequisites", "Installation", "Configuration",
		"Upgrading", "Backup and Restore", "Monitoring", "Security", "Troubleshooting", "Support"}
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "### %s\n\n%s\n\n", sections[i%len(sections)], paragraph(r, 2+r.IntN(4)))
		switch i % 3 {
		case 0:
			for j := 0; j < 3+r.IntN(3); j++ {
				fmt.Fprintf(&b, "* **%s**: %s\n", words[r.IntN(len(words))], sentence(r, 5, 12))
			}
			b.WriteByte('\n')
		case 1:
			fmt.Fprintf(&b, "```yaml\napiVersion: example.com/v1\nkind: %s\nmetadata:\n  name: example\nspec:\n  replicas: %d\n```\n\n",
				kindName(r), 1+r.IntN(5))
		}
	}
	return b.String()
}

var kindWords = strings.Fields(`Cluster Database Backup Restore Gateway Route Policy Monitor Dashboard
Cache Queue Topic Broker Bucket Pipeline Schedule Tenant Certificate Secret Store Mesh Agent
Collector Exporter Instance Replica Snapshot Volume Endpoint Config`)

func kindName(r *rand.Rand) string {
	return kindWords[r.IntN(len(kindWords))] + kindWords[r.IntN(len(kindWords))]
}

// pngIcon returns the bytes of a real PNG: a 48x48 image with a diagonal
// two-colour gradient and some noise, a few kilobytes once encoded.
func pngIcon(r *rand.Rand) []byte {
	const size = 48
	img := image.NewNRGBA(image.Rect(0, 0, size, size))
	c1 := color.NRGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
	c2 := color.NRGBA{uint8(r.IntN(256)), uint8(r.IntN(256)), uint8(r.IntN(256)), 255}
	mix := func(a, b uint8, t int) uint8 { return uint8((int(a)*(2*size-t) + int(b)*t) / (2 * size)) }
	for y := 0; y < size; y++ {
		for x := 0; x < size; x++ {
			t := x + y
			n := uint8(r.IntN(24))
			img.SetNRGBA(x, y, color.NRGBA{mix(c1.R, c2.R, t) ^ n, mix(c1.G, c2.G, t) ^ n, mix(c1.B, c2.B, t), 255})
		}
	}
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		panic(err) // encoding an in-memory NRGBA image cannot fail
	}
	return buf.Bytes()
}

// svgIcon returns a small SVG logo.
func svgIcon(r *rand.Rand) []byte {
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>` + "\n")
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="64" height="64" viewBox="0 0 64 64">` + "\n")
	fmt.Fprintf(&b, `  <rect x="0" y="0" width="64" height="64" rx="12" fill="#%06x"/>`+"\n", r.IntN(1<<24))
	for i := 0; i < 4+r.IntN(6); i++ {
		fmt.Fprintf(&b, `  <circle cx="%d" cy="%d" r="%d" fill="#%06x" fill-opacity="0.%d"/>`+"\n",
			8+r.IntN(48), 8+r.IntN(48), 4+r.IntN(14), r.IntN(1<<24), 3+r.IntN(7))
	}
	fmt.Fprintf(&b, `  <path d="M%d %d L%d %d L%d %d Z" fill="#ffffff"/>`+"\n",
		10+r.IntN(10), 50, 32, 10+r.IntN(10), 44+r.IntN(10), 50)
	b.WriteString("</svg>\n")
	return []byte(b.String())
}
