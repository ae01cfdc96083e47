package policy

import "testing"

// TestLawAncestorQuick: lawAncestor's quick answer for a path longer than
// the project directory agrees with the full look, for every test
// workflow and template, on the project, its parents, its .git, the
// anchors and their parents, in any case and spelling, ASCII or not.
func TestLawAncestorQuick(t *testing.T) {
	dirs := []string{"", "/", "/repo", "/Repo", "/REPO/.GIT", "/repo/.git", "/repo/.gitx", "/repo/src", "/repo/src/a.go",
		"/repo/src/deep/er/still/a.go", "/répo", "/répo/.git", "/répo/src/a.go", "/home", "/home/u", "/home/u/.local/share",
		"/home/u/.local/share/statewright", "/HOME/U/.LOCAL/SHARE/STATEWRIGHT", "/usr/local/bin", "/usr/local/bin/statewright",
		"/repo/workflows", "/repo/workflows/dev.yaml", "/x/y/z/w/v/u", "/ᴿepo/src/a.go", "/\u212aepo/src/a.go", "/repo/\xff/a.go"}
	projects := []string{"", "/", "/repo", "/Repo", "/repo/", "/repo/./src/..", "/répo", "/\u212aepo", "relative", "/home/u/.local/share/statewright",
		"/repo/src/deep/er", "/RÉPO/src"}
	quick := 0
	for name, law := range simLaws(t) {
		for _, pd := range projects {
			call := &ToolCall{Tool: "Write", Cwd: "/repo", ProjectDir: pd}
			for _, d := range dirs {
				w, ok := law.lawAncestorOf(call, d, true)
				sw, sok := law.lawAncestorOf(call, d, false)
				if w != sw || ok != sok {
					t.Fatalf("%s, project %q, dir %q: quick %q %v, full %q %v", name, pd, d, w, ok, sw, sok)
				}
				if !ok && pd != "" && len(d) > len(pd)+5 {
					quick++
				}
			}
		}
	}
	if quick == 0 {
		t.Fatal("no quick answer was compared")
	}
}
