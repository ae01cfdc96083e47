package policy

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/bmatcuk/doublestar/v4"
)

// rawEditAgrees checks that reading input's flat fields in place gives the
// edit that decoding it into a map gives, for every flat edit kind.
func rawEditAgrees(t *testing.T, input []byte) {
	t.Helper()
	for _, k := range []kind{kWrite, kEdit, kNotebookEdit, kDelete} {
		var raw rawFields
		if !scanFlat(input, &raw) {
			continue
		}
		got, gerr := parseFlatEdit(k, fields{raw: &raw})
		m, err := decodeInput(input)
		if err != nil {
			t.Fatalf("kind %d: scanFlat read %q, which does not decode: %v", k, input, err)
		}
		want, werr := parseEdit(k, m)
		if (gerr == nil) != (werr == nil) || !reflect.DeepEqual(got, want) {
			t.Fatalf("kind %d, input %s:\nin place %+v %v\ndecoded  %+v %v", k, input, got, gerr, want, werr)
		}
		// A decision's reading counts an Edit's lines only when a phase
		// asks (parseFlatEditLater): counted then, they are the lines
		// counted at once.
		p := prepared{call: &ToolCall{Tool: "x", Input: input}, info: toolInfo{kind: k}}
		lei, lerr := p.editInfo()
		if (lerr == nil) != (werr == nil) {
			t.Fatalf("kind %d, input %s: prepared %v, decoded %v", k, input, lerr, werr)
		}
		if lerr != nil {
			continue
		}
		if later := k == kEdit && !want.replaceAll; lei.linesLater != later {
			t.Fatalf("kind %d, input %s: lines counted later %v, want %v", k, input, lei.linesLater, later)
		}
		// Which limits linesWithin answers for before the count.
		var within []int
		for limit := range want.lines + 2 {
			if p.linesWithin(limit) {
				within = append(within, limit)
			}
		}
		if _, _, err := p.editLines(lei.targets()); err != nil || !reflect.DeepEqual(*lei, want) {
			t.Fatalf("kind %d, input %s:\ncounted later %+v %v\ndecoded       %+v", k, input, *lei, err, want)
		}
		// linesWithin(limit) before the count: the edit changes at most
		// limit lines.
		for _, limit := range within {
			if want.lines > limit {
				t.Fatalf("kind %d, input %s: linesWithin(%d) before the count, but it changes %d lines", k, input, limit, want.lines)
			}
		}
	}
}

func TestRawFieldsAgree(t *testing.T) {
	for _, in := range []string{
		`{"file_path":"/a","old_string":"x\ny","new_string":"x\nz"}`,
		`{"file_path":"/a","old_string":"x\\ny","new_string":"q","replace_all":true}`,
		`{ "file_path" : "/a" , "content" : "l1\nl2\n" }`,
		`{"file_path":"/a","file_path":"/b"}`,
		`{"file_path":1,"filePath":"/b"}`,
		`{"path":"/\u0061b","content":"\u00e9"}`,
		`{"file\u005fpath":"/a"}`,
		`{"notebook_path":"/n.ipynb","new_source":"a\nb\nc"}`,
		`{"file_path":"/a","edits":[{"old_string":"a"}],"replaceAll":true,"old":"a","new":"b\nc"}`,
		`{"file_path":"/a","replace_all":"true"}`,
		`{"file_path":"/a","content":null}`,
		`{"file_path":"/a","content":"a\nb\n"}`, `{"file_path":"/a","content":"a\\nb"}`, `{"file_path":"/a","content":"\u000aa\u000A"}`,
		`{"file_path":"/a","content":"\\\n\r\n\u00e9\u000b"}`, `{"file_path":"/a","content":"\n"}`, `{"file_path":"/a","contents":"x\n\n","content":1}`,
		`{}`, `null`, `[]`, `{"file_path":"/a"`, `{"file_path":"/a"} x`, ``,
		// Two spellings of a field: one value (escaped or not), or two.
		`{"file_path":"/a","filePath":"/b"}`, `{"file_path":"/a","path":"/\u0061"}`, `{"file_path":"/a","path":1}`,
		`{"file_path":"/a","content":"x","text":"y"}`, `{"file_path":"/a","old_string":"x","old":"y","new_string":"z"}`,
		`{"file_path":"/a","old_string":"x","new_string":"z","newText":"z\n"}`, `{"notebook_path":"/a","new_source":"x","content":"x"}`,
		// An Edit's escaped text, decoded in place: tabs, quotes, newlines,
		// carriage returns, \u escapes, surrogates, invalid UTF-8, text
		// longer than the stack's room.
		`{"file_path":"/a","old_string":"\tx := \"a\"\n\treturn x","new_string":"\tx := \"b\"\n\treturn x"}`,
		`{"file_path":"/a","old_string":"a\r\nb\r\nc","new_string":"a\r\nB\r\nc"}`,
		`{"file_path":"/a","old_string":"a\nb","new_string":"a\u000ab"}`,
		`{"file_path":"/a","old_string":"\u00e9\nx","new_string":"é\ny"}`,
		`{"file_path":"/a","old_string":"\ud83d\ude00\nx\n","new_string":"\ud83d\nx\n"}`,
		"{\"file_path\":\"/a\",\"old_string\":\"\xff\\nx\",\"new_string\":\"\\ufffd\\nx\"}",
		`{"file_path":"/a","old_string":"plain\nold","new_string":"\tplain\nold"}`,
		`{"file_path":"/a","old_string":"` + strings.Repeat(`line \"q\"\n`, 200) + `x","new_string":"` + strings.Repeat(`line \"q\"\n`, 200) + `y"}`,
		`{"file_path":"/a","old_string":"` + strings.Repeat(`l\n`, 600) + `","new_string":"` + strings.Repeat(`l\n`, 300) + `m\n` + strings.Repeat(`l\n`, 300) + `"}`,
	} {
		rawEditAgrees(t, []byte(in))
	}
}

func FuzzRawFields(f *testing.F) {
	for _, in := range []string{`{"file_path":"/a","old_string":"x\ny","new_string":"x\nz","replace_all":true}`,
		`{"path":"/\u0061b","content":"\u00e9","file_path":"/c"}`, `{"a":{"file_path":"/x"},"file_path":"/y"}`,
		`{"file_path":"/a","old_string":"\tx\r\n\"y\"","new_string":"\tx\n\"z\""}`} {
		f.Add([]byte(in))
	}
	f.Fuzz(rawEditAgrees)
}

// TestChangedLinesInPlace: counting in place agrees with splitting.
func TestChangedLinesInPlace(t *testing.T) {
	words := []string{"", "a", "b", "\n", "a\n", "b\n", "\n\n", "c\nd", "x\r\n"}
	split := changedLinesSplit
	var texts []string
	for _, x := range words {
		for _, y := range words {
			for _, z := range words {
				texts = append(texts, x+y+z)
			}
		}
	}
	for _, o := range texts {
		if got, want := countLines(o), len(splitLines(o)); got != want {
			t.Fatalf("countLines(%q) = %d, want %d", o, got, want)
		}
		for _, n := range texts {
			if got, want := changedLines(o, n), split(o, n); got != want {
				t.Fatalf("changedLines(%q, %q) = %d, want %d", o, n, got, want)
			}
		}
	}
}

// TestFlatKeys: flatKeyIndex knows every key parseFlatEdit asks for, and
// pathKeys are flatKeys' first.
func TestFlatKeys(t *testing.T) {
	for i, k := range flatKeys {
		if flatKeyIndex(k) != i {
			t.Errorf("flatKeyIndex(%q) = %d, want %d", k, flatKeyIndex(k), i)
		}
	}
	for _, list := range [][]string{pathKeys, contentKeys, oldKeys, newKeys, notebookKeys, {"replace_all", "replaceAll"}} {
		for _, k := range list {
			if flatKeyIndex(k) < 0 {
				t.Errorf("flatKeyIndex does not know %q", k)
			}
		}
	}
	if len(flatKeys) > len(rawFields{}.spans) {
		t.Errorf("%d flat keys, %d spans", len(flatKeys), len(rawFields{}.spans))
	}
}

func TestValidJSON(t *testing.T) {
	for _, s := range []string{`{}`, `[]`, `[1,2]`, `{"a":[1,{"b":null}],"c":"\u00e9\n"}`, ` "x" `, `-0.5e+3`, `01`, `1.`, `.5`, `[1,]`, `{"a"}`,
		`{"a":1,}`, `{,}`, `[,1]`, `"\x"`, "\"\x01\"", `"\u12g4"`, `tru`, `nul`, `{"a":1}}`, `[[[[]]]]`, `{"a":{"b":{}}}`, ``, ` `, `{} {}`,
		`[` + strings.Repeat(`[`, 40) + strings.Repeat(`]`, 40) + `]`, "\"\xff\"", `{"a" : 1 , "b" : [ true , false ] }`} {
		if got, want := validJSON(s), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid %v", s, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{`{"file_path":"/a","old_string":"x\ny"}`, `[1,{"a":-2.5e3}]`, `"\ud800"`, `{"a":[[],{}]}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validJSON(s), json.Valid([]byte(s)); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid %v", s, got, want)
		}
	})
}

// TestScopeTree: a "DIR/**" scope matched without doublestar answers as
// doublestar does.
func TestScopeTree(t *testing.T) {
	for _, pat := range []string{"src/**", "src/secrets/**", "/abs/dir/**", "a.b/**"} {
		g := pathGlob{pattern: pat}
		if dir, ok := strings.CutSuffix(pat, "/**"); ok {
			g.tree = dir
		}
		for _, target := range []string{"src", "src/", "src/a", "src/a/b", "srcx", "srcx/a", "secrets", "src/secrets", "src/secrets/k",
			"/abs/dir", "/abs/dir/x", "/abs/dirx", "a.b", "a.b/c", "axb/c", "", ".", "x/src/a"} {
			want, _ := doublestar.Match(pat, target)
			if got := matchScope([]pathGlob{g}, target, target); got != want {
				t.Errorf("%q vs %q: %v, doublestar %v", pat, target, got, want)
			}
		}
	}
}

// TestStringValuePlain: stringValue, which takes a literal of plain ASCII
// eight bytes at a time (plainASCII), answers as the byte-by-byte test
// and the decoding after it: every byte value at every place of two words
// and a tail, in a literal and in ones that do not end as one.
func TestStringValuePlain(t *testing.T) {
	reference := func(v string) (string, bool) {
		if len(v) < 2 || v[0] != '"' {
			return "", false
		}
		if strings.IndexByte(v, '\\') < 0 && utf8.ValidString(v) {
			return v[1 : len(v)-1], true
		}
		if b, ok := appendUnquoted(nil, v); ok {
			return string(b), true
		}
		var out string
		if json.Unmarshal([]byte(v), &out) == nil {
			return out, true
		}
		return "", false
	}
	const base = "/repo/src/abc.go/xy" // two words and a tail of three
	for pos := range len(base) {
		for c := range 256 {
			inner := base[:pos] + string([]byte{byte(c)}) + base[pos+1:]
			for _, v := range []string{`"` + inner + `"`, `"` + inner, `"` + inner + `x`, `"` + inner + `\"`} {
				gs, gok := stringValue(v)
				ws, wok := reference(v)
				if gs != ws || gok != wok {
					t.Fatalf("stringValue(%q) = %q %v, want %q %v", v, gs, gok, ws, wok)
				}
			}
		}
	}
	for _, v := range []string{`""`, `"`, `"\"`, `"\\"`, `"a\u0041"`, `"é"`, "\"\xff\"", `"abcdefgh\"`} {
		gs, gok := stringValue(v)
		ws, wok := reference(v)
		if gs != ws || gok != wok {
			t.Errorf("stringValue(%q) = %q %v, want %q %v", v, gs, gok, ws, wok)
		}
	}
}
