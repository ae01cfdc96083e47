package buildinfo

import (
	"runtime"
	"strings"
	"testing"
)

func TestString(t *testing.T) {
	for _, tc := range []struct {
		in   Info
		want string
	}{
		{Info{Version: "v1.2.3", Commit: "0123456789abcdef0123", Date: "2026-01-02T03:04:05Z", Go: "go1.26.8", Platform: "linux/amd64"},
			"statewright v1.2.3 (commit 0123456789ab, 2026-01-02T03:04:05Z, go1.26.8 linux/amd64)"},
		{Info{Version: "devel", Commit: "abc", Modified: true, Go: "go1.26.8", Platform: "darwin/arm64"},
			"statewright devel (commit abc+modified, go1.26.8 darwin/arm64)"},
		{Info{Version: "devel", Go: "go1.26.8", Platform: "windows/amd64"},
			"statewright devel (go1.26.8 windows/amd64)"},
	} {
		if got := tc.in.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
}

// TestGetWithoutStamp: a test binary carries no -X stamp, so the version
// is "devel" (the module's is "(devel)" too) and the platform is this one.
func TestGetWithoutStamp(t *testing.T) {
	i := Get()
	if i.Version != "devel" || i.Go != runtime.Version() || i.Platform != runtime.GOOS+"/"+runtime.GOARCH {
		t.Errorf("Get() = %+v", i)
	}
	if !strings.HasPrefix(i.String(), "statewright devel (") {
		t.Errorf("String() = %q", i.String())
	}
}
