package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

// unquoteAgrees checks appendUnquoted against encoding/json on the JSON
// string literal v: the same text for every literal json decodes, a
// refusal (never a different answer) for the rest.
func unquoteAgrees(t *testing.T, v string) {
	t.Helper()
	if len(v) > 0 && (v[0] != '"' || v[len(v)-1] != '"') {
		return // (not a literal alone: json would read around spaces)
	}
	var want string
	werr := json.Unmarshal([]byte(v), &want)
	got, ok := appendUnquoted([]byte("prefix"), v)
	switch {
	case werr == nil && (!ok || string(got) != "prefix"+want):
		t.Fatalf("appendUnquoted(%q) = %q %v, encoding/json %q", v, got, ok, want)
	case werr != nil && ok && json.Valid([]byte(v)):
		t.Fatalf("appendUnquoted(%q) = %q, encoding/json fails: %v", v, got, werr)
	}
}

func TestUnquote(t *testing.T) {
	for _, v := range []string{`""`, `"a"`, `"\n\t\r\b\f\/\\\""`, `"\u0041\u00e9\u20ac"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ud83dx"`,
		`"\ude00\ud83d"`, `"\ud83d\u0041"`, `"\ud83d\ud83d\ude00"`, "\"\xff\xfe\"", "\"\xed\xa0\x80\"", "\"é€😀\"", `"\u000a\u000A\u000d"`,
		`"\uD83D\uDE00"`, `"x\"`, `"\x"`, `"\u12"`, `"\u12g4"`, "\"\x01\"", `"a"b"`, `a`, `"`, ``,
		`"` + strings.Repeat(`\tfmt.Println(\"x\")\n`, 100) + `"`,
		"\"" + strings.Repeat("é", 40) + "\xff\xc3" + `\n` + "\xe2\x82" + `"`, "\"ab\xf0\x9f\x98" + `\u0041"`} {
		unquoteAgrees(t, v)
	}
}

func FuzzUnquote(f *testing.F) {
	for _, v := range []string{`"a\nb"`, `"\ud83d\ude00"`, "\"\xff\"", `"\u00e9\t"`} {
		f.Add(v)
	}
	f.Fuzz(unquoteAgrees)
}
