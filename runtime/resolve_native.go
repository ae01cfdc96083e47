//go:build !windows

package runtime

// nativePath is the path the operating system takes for a slash-form path
// the policy decides on; on Unix the same. A Windows path in slash form
// (/c:/users/me, from a Windows-shaped call decided here) does not exist
// on this host and resolves lexically.
func nativePath(p string) string { return p }

// slashTarget is a symbolic link's target in the form the resolver walks.
func slashTarget(t string) (string, error) { return t, nil }
