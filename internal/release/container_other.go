//go:build !linux

package release

import "errors"

// terminateDescendant is not needed where containers cannot run (runImage
// stops before it).
func terminateDescendant(int, string) error {
	return errors.New("containers need Linux")
}
