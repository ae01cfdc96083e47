package sandbox

// Unsupported says why there is no OS sandbox on goos, and what that
// means ("" on Linux, where bubblewrap may provide one): what doctor and
// the agent runner report on macOS and Windows (docs/threat-model.md, docs/release.md).
func Unsupported(goos string) string {
	if goos == "linux" {
		return ""
	}
	return "no OS sandbox on " + goos + ": statewright's sandbox needs Linux (bubblewrap, user namespaces). " +
		"The static law still decides every call, but code the agent runs is not contained: " +
		"approvals and tokens are not protected from it, and --require-sandbox makes shell calls deny instead"
}
