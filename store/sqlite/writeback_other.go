//go:build !linux

package sqlite

import "os"

// writebackSupported: this system can start a file's writeback without
// waiting for it (not here: the checkpoints' fsyncs write it all).
const writebackSupported = false

func startWriteback(*os.File) {}

func writebackHelps(*os.File) bool { return false }
