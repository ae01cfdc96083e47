//go:build !linux

package cmdutil

// WidenTimerSlack does nothing outside Linux (see slack_linux.go).
func WidenTimerSlack() {}
