//go:build !linux

package sandbox

import "io"

// Without Linux there is no sandbox, so no sandbox server either
// (server_linux.go).

func writeServerSpec(dir, rw string, a Availability, p *Profile) error { return nil }

func prepareFast(c Call) error { return nil }

func removeFast(c Call) {}

func fastShell(c Call) string { return "__sw_rc=; " }

func viaServer(callDir, script string, stderr io.Writer) (int, bool) { return 0, false }

// StopServer does nothing here: no sandbox server runs without Linux.
func StopServer(root, session string) {}

// StopServerUnless does nothing here: no sandbox server runs without Linux.
func StopServerUnless(root, session string, keep *string) {}

// Keep fails here: no sandbox server runs without Linux.
func Keep(args []string, stderr io.Writer) int { return Serve(args, stderr) }

// Serve fails here: no sandbox server runs without Linux.
func Serve(args []string, stderr io.Writer) int {
	_, _ = io.WriteString(stderr, "statewright sandbox serve: "+Unsupported("this system")+"\n")
	return 126
}

func followPhase(callDir string, p *Profile, pid int) func() bool {
	return func() bool { return false }
}

func registerSelf(callDir string, p *Profile) {}
