//go:build !linux || !(amd64 || arm64)

package hookwire

import "crypto/rand"

// randomFill fills b from crypto/rand.
func randomFill(b []byte) error {
	_, err := rand.Read(b)
	return err
}
