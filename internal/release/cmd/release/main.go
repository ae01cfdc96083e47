// Command release builds and checks statewright's release (package
// internal/release); scripts/release.sh runs it. Usage:
//
//	release [-out dist] [-version v1.2.3] [-targets os/arch,...] [-repro os/arch] [-require-container] [-no-check]
//	release -check-only [-out dist] [-targets ...] [-require-container]
//
// It builds every binary for every target (one shared build cache),
// writes the images, the SBOM and SHA256SUMS, then checks the result;
// -repro rebuilds one target from a copy of the tree with an empty cache
// and compares. Each step prints its wall time.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/statewright-go/statewright/internal/release"
)

func main() {
	os.Exit(run())
}

func run() int {
	var (
		out, version, targets, repro string
		requireContainer, noCheck    bool
		checkOnly                    bool
	)
	flag.StringVar(&out, "out", "dist", "the release directory (replaced when it holds an older release)")
	flag.StringVar(&version, "version", "", "the version to stamp (default: the commit's tag, else a Go pseudo-version)")
	flag.StringVar(&targets, "targets", "", "comma-separated os/arch targets (default all six)")
	flag.StringVar(&repro, "repro", "", "rebuild this os/arch from a copy of the tree with an empty cache and compare")
	flag.BoolVar(&requireContainer, "require-container", false, "fail when the image cannot be run as a container here")
	flag.BoolVar(&noCheck, "no-check", false, "build only; do not check the result")
	flag.BoolVar(&checkOnly, "check-only", false, "check the release in -out without building")
	flag.Parse()
	if flag.NArg() != 0 {
		fmt.Fprintln(os.Stderr, "release: unexpected arguments:", strings.Join(flag.Args(), " "))
		return 2
	}
	var ts []release.Target
	if targets != "" {
		for _, s := range strings.Split(targets, ",") {
			t, err := release.ParseTarget(strings.TrimSpace(s))
			if err != nil {
				fmt.Fprintln(os.Stderr, "release: -targets:", err)
				return 2
			}
			ts = append(ts, t)
		}
	}
	var reproTarget release.Target
	if repro != "" {
		t, err := release.ParseTarget(repro)
		if err != nil {
			fmt.Fprintln(os.Stderr, "release: -repro:", err)
			return 2
		}
		reproTarget = t
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	dir, err := os.Getwd()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		return 1
	}
	step := func(name string, fn func() error) error {
		start := time.Now()
		err := fn()
		fmt.Printf("--- %s: %s\n", name, time.Since(start).Round(100*time.Millisecond))
		return err
	}
	err = func() error {
		if !checkOnly {
			stamp, err := release.StampFromGit(ctx, dir, version)
			if err != nil {
				return err
			}
			fmt.Printf("release %s (commit %s, %s) into %s\n", stamp.Version, stamp.Commit, stamp.Date, out)
			gocache := os.Getenv("GOCACHE")
			if err := step("build", func() error {
				return release.Make(ctx, release.Options{Dir: dir, Out: out, Stamp: stamp, Targets: ts, GoCache: gocache, Log: os.Stdout})
			}); err != nil {
				return err
			}
			if repro != "" {
				if err := step("reproducibility of "+repro, func() error {
					res, err := release.Repro(ctx, release.ReproOptions{Dir: dir, Out: out, Stamp: stamp, Target: reproTarget, Log: os.Stdout})
					for _, r := range res {
						fmt.Printf("repro: %s %s (release) %s (rebuilt)\n", r.File, r.First, r.Second)
					}
					return err
				}); err != nil {
					return err
				}
			}
			if noCheck {
				return nil
			}
		}
		return step("check", func() error {
			return release.Check(ctx, release.CheckOptions{Dir: out, Targets: ts, RequireContainer: requireContainer, Log: os.Stdout})
		})
	}()
	if err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		return 1
	}
	abs, _ := filepath.Abs(out)
	fmt.Println("release: ok:", abs)
	return 0
}
