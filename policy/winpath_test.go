package policy

import (
	"strings"
	"testing"
)

func TestSlashWindowsPath(t *testing.T) {
	tests := []struct {
		in, want string
		bad      bool
	}{
		{in: `C:\Users\Me\Proj\.claude\settings.json`, want: "/c:/users/me/proj/.claude/settings.json"},
		{in: `c:/users/me`, want: "/c:/users/me"},
		{in: `C:\`, want: "/c:"},
		{in: `C:\a\..\..\..\b`, want: "/c:/b"},
		{in: `C:\a\.\b\\c\`, want: "/c:/a/b/c"},
		{in: `C:\a.\b \c. .`, want: "/c:/a/b/c"},
		{in: `\\?\C:\Users\me`, want: "/c:/users/me"},
		{in: `\\?\UNC\Server\Share\x`, want: "/unc:/server/share/x"},
		{in: `\\Server\Share\x\..\..\y`, want: "/unc:/server/share/y"},
		{in: `/c:/Users/me`, want: "/c:/users/me"},
		{in: `/unc:/s/sh/X`, want: "/unc:/s/sh/x"},
		{in: `/c/Users/me`, want: "/c:/users/me"},
		{in: `/cygdrive/D/x`, want: "/d:/x"},
		{in: `C:`, bad: true},
		{in: `C:foo`, bad: true},
		{in: `\\.\C:\x`, bad: true},
		{in: `\\?\GLOBALROOT\Device\x`, bad: true},
		{in: `\\localhost\C$\x`, bad: true},
		{in: `\\127.0.0.1\share\x`, bad: true},
		{in: `\\server\admin$\x`, bad: true},
		{in: `\\server`, bad: true},
		{in: `\\..\0`, bad: true},
		{in: `\\srv\..\x`, bad: true},
		{in: `\\. .\share`, bad: true},
		{in: `/unc:/../0`, bad: true},
		{in: `C:\proj\CLAUDE~1\settings.json`, bad: true},
		{in: `C:\proj\x.json::$DATA`, bad: true},
		{in: `C:\proj\x.json:s`, bad: true},
		{in: `C:\proj\...\x`, bad: true},
		{in: `C:\proj\a|b`, bad: true},
		{in: `\Users\me`, bad: true},
		{in: `relative\x`, bad: true},
	}
	for _, tt := range tests {
		got, err := SlashWindowsPath(tt.in)
		if tt.bad {
			if err == nil {
				t.Errorf("SlashWindowsPath(%q) = %q, want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("SlashWindowsPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestWindowsCallPaths(t *testing.T) {
	law := loadLaw(t, "workflows/dev.yaml", Options{Host: &Host{Home: `C:\Users\Me`, ProjectDir: `C:\Users\Me\Proj`}})
	call := slashCall(&ToolCall{Cwd: `C:\Users\Me\Proj\src`, ProjectDir: `C:\Users\Me\Proj`})
	tests := []struct{ written, want string }{
		{`a.go`, "/c:/users/me/proj/src/a.go"},
		{`..\.claude\settings.json`, "/c:/users/me/proj/.claude/settings.json"},
		{`\Windows\x`, "/c:/windows/x"},
		{`~\.ssh\id_rsa`, "/c:/users/me/.ssh/id_rsa"},
		{`~/.ssh`, "/c:/users/me/.ssh"},
		{`D:\x`, "/d:/x"},
		{`x~1`, "?" + `/c:/users/me/proj/src/x~1`},
	}
	for _, tt := range tests {
		if got := law.absPath(call, tt.written); got != tt.want {
			t.Errorf("absPath(%q) = %q, want %q", tt.written, got, tt.want)
		}
	}
	if !law.isProtected("/c:/users/me/proj/.claude/settings.json") || !law.isProtected("/c:/users/me/.codex/config.toml") {
		t.Error("the Windows host's protected trees are not in slash form")
	}
	if got := law.info(call, law.absPath(call, `C:\a\CLAUDE~1`)).Err; got != errWinPath {
		t.Errorf("a short name resolves with Err %q, want %q", got, errWinPath)
	}
	// A Unix call is untouched.
	if c := (&ToolCall{Cwd: "/repo"}); slashCall(c) != c || winCall(c) {
		t.Error("a Unix call was taken for a Windows one")
	}
}

func FuzzSlashWindowsPath(f *testing.F) {
	for _, s := range []string{`C:\a\b`, `\\s\sh\x`, `\\?\C:\x`, `/c/x`, `C:\a\..\..`, `C:\x~1`, `c:/a/./b. /`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		s, err := SlashWindowsPath(p)
		if err != nil {
			return
		}
		if !winSlash(s) {
			t.Fatalf("SlashWindowsPath(%q) = %q, not in slash form", p, s)
		}
		if s != strings.ToLower(s) {
			t.Fatalf("SlashWindowsPath(%q) = %q, not lower-cased", p, s)
		}
		if strings.Contains(s, "/../") || strings.HasSuffix(s, "/..") || strings.Contains(s, "//") || strings.Contains(s, `\`) {
			t.Fatalf("SlashWindowsPath(%q) = %q, not clean", p, s)
		}
		again, err := SlashWindowsPath(s)
		if err != nil || again != s {
			t.Fatalf("SlashWindowsPath(%q) = %q, then %q, %v: not idempotent", p, s, again, err)
		}
	})
}

// TestWinDir: winDir is windowsAbs || winSlash, on every string of up to
// three bytes from the bytes that matter to either, and on longer ones.
func TestWinDir(t *testing.T) {
	alpha := []string{"", "/", `\`, ":", "c", "C", "u", "n", ".", "?", "x", "1", "é"}
	var ins []string
	for _, a := range alpha {
		for _, b := range alpha {
			for _, c := range alpha {
				ins = append(ins, a+b+c, a+b+c+"/x")
			}
		}
	}
	ins = append(ins, "/unc:", "/unc:/s/x", "/unc", "/c:/", "/c:", `\\server\share`, `\/x`, `/\x`, "c:x", "/repo", "/repo/src")
	for _, in := range ins {
		if got, want := winDir(in), windowsAbs(in) || winSlash(in); got != want {
			t.Errorf("winDir(%q) = %v, windowsAbs || winSlash %v", in, got, want)
		}
	}
}
