// Command opmimage assembles the opm image from opm executables built for
// several platforms (`make image` builds them and runs this): one image per
// platform (/bin/opm as the entrypoint, user 1001, a writable /tmp, OCI
// labels), an index of them, written to every destination opm build
// writes to (registry, oci:DIR[:TAG], oci-archive:FILE[:TAG]). Its time is
// $SOURCE_DATE_EPOCH (else the Unix epoch), so the same executables give
// the same digest.
//
//	opmimage -version V -revision R -binary linux/amd64=PATH ... -t DEST ...
//
// It prints the index digest and, per platform, the image digest and
// size (compressed layers and config, as a registry stores them).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/opmkit/opm/pkg/action/build"
	"github.com/opmkit/opm/pkg/image"
	"github.com/opmkit/opm/pkg/imagebuild"
)

type list []string

func (l *list) String() string     { return strings.Join(*l, ",") }
func (l *list) Set(s string) error { *l = append(*l, s); return nil }

func main() {
	var binaries, tags list
	version := flag.String("version", "", "the version stamped into the executables")
	revision := flag.String("revision", "", "the commit stamped into the executables")
	overwrite := flag.Bool("overwrite", false, "replace existing archives")
	flag.Var(&binaries, "binary", "os/arch=PATH of a static opm executable (repeatable)")
	flag.Var(&tags, "t", "destination (repeatable): HOST/REPO[:TAG], oci:DIR[:TAG] or oci-archive:FILE[:TAG]")
	flag.Parse()
	if *version == "" || len(binaries) == 0 || len(tags) == 0 || flag.NArg() > 0 {
		fmt.Fprintln(os.Stderr, "usage: opmimage -version V [-revision R] -binary os/arch=PATH... -t DEST...")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, *version, *revision, binaries, tags, *overwrite); err != nil {
		fmt.Fprintln(os.Stderr, "opmimage:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, version, revision string, binaries, tags []string, overwrite bool) error {
	epoch, err := imagebuild.Epoch(os.Getenv("SOURCE_DATE_EPOCH"))
	if err != nil {
		return err
	}
	var bins []imagebuild.Binary
	for _, b := range binaries {
		plat, path, ok := strings.Cut(b, "=")
		if !ok {
			return fmt.Errorf("-binary %q: want os/arch=PATH", b)
		}
		ps, err := imagebuild.ParsePlatforms([]string{plat})
		if err != nil {
			return err
		}
		bins = append(bins, imagebuild.Binary{Platform: ps[0], Path: path})
	}
	var dests []image.Destination
	for _, t := range tags {
		d, err := image.ParseDestination(t, false)
		if err != nil {
			return err
		}
		dests = append(dests, d)
	}
	built, err := build.OpmImage(ctx, build.OpmImageOptions{Binaries: bins, Version: version, Revision: revision, Created: epoch, ModTime: epoch})
	if err != nil {
		return err
	}
	defer built.Close()
	s := image.NewSession()
	defer s.Close()
	for _, d := range dests {
		if err := s.Write(ctx, d, built.Artifact, image.WriteOptions{Overwrite: overwrite, ModTime: epoch}); err != nil {
			return err
		}
	}
	fmt.Printf("%s %s\n", built.Digest, built.MediaType)
	for _, img := range built.Images {
		m, err := img.Manifest()
		if err != nil {
			return err
		}
		size := m.Config.Size
		for _, l := range m.Layers {
			size += l.Size
		}
		d, _ := img.Digest()
		fmt.Printf("  %-16s %s %.1f MiB\n", img.Platform(), d, float64(size)/(1<<20))
	}
	for _, t := range tags {
		fmt.Printf("written to %s\n", t)
	}
	return nil
}
