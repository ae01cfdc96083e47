package cmdutil

import (
	"io"
	"os"
)

// Colors paints what a command prints for a person at a terminal. It is
// off (every method returns its text unchanged) when the output is not a
// terminal, when NO_COLOR is set to anything but the empty string
// (https://no-color.org) or when TERM is dumb.
type Colors struct{ on bool }

// ColorsFor returns the Colors for output written to w.
func ColorsFor(w io.Writer) Colors { return Colors{on: colorOn(isTerminal(w), os.Getenv)} }

// colorOn decides whether to paint: a terminal, and no NO_COLOR or dumb TERM.
func colorOn(terminal bool, getenv func(string) string) bool {
	return terminal && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

func (c Colors) paint(code, s string) string {
	if !c.on || s == "" {
		return s
	}
	return "\x1b[" + code + "m" + s + "\x1b[0m"
}

// Red paints s red (errors, denies).
func (c Colors) Red(s string) string { return c.paint("31", s) }

// Yellow paints s yellow (warnings, asks).
func (c Colors) Yellow(s string) string { return c.paint("33", s) }

// Green paints s green (allows).
func (c Colors) Green(s string) string { return c.paint("32", s) }

// Bold makes s bold.
func (c Colors) Bold(s string) string { return c.paint("1", s) }
