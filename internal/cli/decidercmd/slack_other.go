//go:build !linux

package decidercmd

func widenTimerSlack() {}
