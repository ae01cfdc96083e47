package policy

import "testing"

// TestDeniedPathsFold: denied_paths hold whatever the case of the path.
// On a case-insensitive file system (macOS's APFS by default, NTFS)
// Config/prod.yaml is config/prod.yaml; denied_paths matched case-
// sensitively outside Windows-shaped calls, so a Write of it was allowed.
// A deny errs on the safe side, as deny rules do.
func TestDeniedPathsFold(t *testing.T) {
	law := compileSource(t, []byte(`{"id":"d","initial":"w","states":{
 "w":{"allowed_tools":["Write","Bash"],"denied_paths":["config/**","/etc/app/**"],"on":{"D":"d"}},"d":{"type":"final"}}}`), "d.json", corpusOptions)
	run := &RunState{Active: true, State: "w"}
	checkPathCases(t, law, run, []pathCase{
		{"Write", "/repo/config/prod.yaml", false},
		{"Write", "/repo/Config/prod.yaml", false},
		{"Write", "/repo/CONFIG/prod.yaml", false},
		{"Write", "/repo/confıg/prod.yaml", false}, // dotless i: NTFS's I
		{"Write", "/ETC/App/x.conf", false},
		{"Bash", "echo x > Config/prod.yaml", false},
		{"Write", "/repo/src/config.go", true},
		{"Write", "/repo/configs/x.yaml", true},
	})
}
