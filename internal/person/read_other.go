//go:build !unix

package person

import "os"

func readStat(path string) ([]byte, error) { return os.ReadFile(path) }
