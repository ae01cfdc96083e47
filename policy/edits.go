package policy

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
)

// editInfo is what an edit tool call changes.
type editInfo struct {
	// one is the target as written of an edit that names one file (a
	// flat edit, a MultiEdit; paths is then nil: no slice is allocated),
	// paths the targets of a patch.
	one   string
	paths []string
	lines int // lines changed
	// replaceAll: an Edit that replaces every occurrence of old; lines
	// counts one occurrence until the file's content is known.
	replaceAll bool
	old, new   string
	// multi: a MultiEdit's edits, kept when one of them replaces every
	// occurrence (replaceAll is set then): its lines are counted by
	// applying them in order to the file's content (multiEditLines).
	multi []multiOp
	// linesLater: lines is not counted yet (parseFlatEditLater); the
	// prepared call counts it from its raw fields (editLines).
	linesLater bool
}

// targets returns the edit's targets as written (a slice of its own
// for one target).
func (ei *editInfo) targets() []string {
	if ei.one != "" {
		return []string{ei.one}
	}
	return ei.paths
}

// ContentReader is implemented by a Resolver that can read a file (on the
// agent's host, bounded). With it an Edit with replace_all counts every
// line it changes; without it such an edit is not countable and is denied
// where max_edit_lines applies.
type ContentReader interface {
	// Content returns the file's content; ok is false when it cannot be
	// read (missing, too large, not a regular file).
	Content(abs string) (content string, ok bool)
}

// replaceAllLines counts the lines an Edit with replace_all changes in
// content: every occurrence changes the lines one replacement changes (at
// least one), and occurrences that share a line count that line once.
func replaceAllLines(content, old, new string) int {
	if old == "" {
		return 0
	}
	per := max(changedLines(old, new), 1)
	lines, lastLine, idx := 0, -1, 0
	for {
		i := strings.Index(content[idx:], old)
		if i < 0 {
			break
		}
		at := idx + i
		line := strings.Count(content[:at], "\n")
		if line == lastLine && !strings.Contains(old, "\n") {
			// another occurrence on the same line
		} else {
			lines += per
		}
		lastLine = line + strings.Count(old, "\n")
		idx = at + len(old)
	}
	return lines
}

// multiOp is one edit of a MultiEdit: old replaced by new, at its first
// occurrence or (all) at every one.
type multiOp struct {
	old, new string
	all      bool
}

// multiEditLines counts the lines a MultiEdit's edits change in content,
// applied in order as the harness applies them: an edit with replace_all
// changes every occurrence in the content the edits before it left
// (replaceAllLines), any other the lines its replacement changes.
func multiEditLines(content string, ops []multiOp) int {
	lines := 0
	for _, op := range ops {
		if !op.all || op.old == "" {
			lines += changedLines(op.old, op.new)
			if op.old != "" {
				content = strings.Replace(content, op.old, op.new, 1)
			}
			continue
		}
		lines += replaceAllLines(content, op.old, op.new)
		content = strings.ReplaceAll(content, op.old, op.new)
	}
	return lines
}

var pathKeys = []string{"file_path", "filePath", "path", "notebook_path", "target_file", "file", "filename"}

var errNoPath = errors.New("the input names no file path")

// The fields of a flat edit, in the order they are looked for.
var (
	contentKeys  = []string{"content", "contents", "text"}
	oldKeys      = []string{"old_string", "oldString", "oldText", "old_str", "old"}
	newKeys      = []string{"new_string", "newString", "newText", "new_str", "new"}
	notebookKeys = []string{"new_source", "content"}
	// A MultiEdit's edits: their old and new text.
	multiOldKeys = []string{"old_string", "oldString", "oldText"}
	multiNewKeys = []string{"new_string", "newString", "newText"}
)

// MultiEditTextKeys returns the spellings a MultiEdit's edit gives its old
// and its new text under, in the order the law looks for them (it reads
// the first it finds). The gateway refuses a mapped edit an upstream could
// read under another spelling (gateway.lawEdits).
func MultiEditTextKeys() (oldKeys, newKeys []string) {
	return slices.Clone(multiOldKeys), slices.Clone(multiNewKeys)
}

// The same as keyLists, and the two spellings of replace_all.
var (
	pathList, contentList, notebookList = keyListOf(pathKeys...), keyListOf(contentKeys...), keyListOf(notebookKeys...)
	oldList, newList                    = keyListOf(oldKeys...), keyListOf(newKeys...)
	replaceAllList, replaceAllCamel     = keyListOf("replace_all"), keyListOf("replaceAll")
)

func decodeInput(input json.RawMessage) (map[string]any, error) {
	if len(input) == 0 {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal(input, &m); err != nil {
		return nil, errors.New("the tool input is not a JSON object")
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func str(m map[string]any, keys ...string) (string, bool) {
	for _, k := range keys {
		if s, ok := m[k].(string); ok {
			return s, true
		}
	}
	return "", false
}

// parseEdit extracts the targets and changed-line count of an edit tool call.
func parseEdit(k kind, m map[string]any) (editInfo, error) {
	var ei editInfo
	switch k {
	case kApplyPatch:
		text, ok := patchText(m)
		if !ok {
			return ei, errors.New("the input carries no patch text")
		}
		if !patchAgrees(m, text) {
			return ei, errAmbiguousText
		}
		ei.paths, ei.lines = parsePatch(text)
		if len(ei.paths) == 0 {
			return ei, errors.New("the patch names no file")
		}
		return ei, nil
	case kMultiEdit:
		p, ok := str(m, pathKeys...)
		if !ok || p == "" {
			return ei, errNoPath
		}
		if !(fields{m: m}).agree(pathList) {
			return ei, errAmbiguousPath
		}
		ei.one = p
		if edits, ok := m["edits"].([]any); ok {
			var ops []multiOp
			for _, e := range edits {
				em, _ := e.(map[string]any)
				o, _ := str(em, multiOldKeys...)
				n, _ := str(em, multiNewKeys...)
				all, _ := em["replace_all"].(bool)
				camel, _ := em["replaceAll"].(bool)
				ei.lines += changedLines(o, n)
				ops = append(ops, multiOp{old: o, new: n, all: all || camel})
				ei.replaceAll = ei.replaceAll || all || camel
			}
			if ei.replaceAll {
				// (As an Edit's: counted in the file's content.)
				ei.multi = ops
			}
		}
		return ei, nil
	}
	return parseFlatEdit(k, fields{m: m})
}

// fields reads the top-level fields of a tool input: the decoded map m,
// or, when raw is set, the raw JSON where the fields an edit needs are
// flat (a concrete type, not an interface, so that reading in place
// allocates nothing).
type fields struct {
	m   map[string]any
	raw *rawFields
}

// str returns the first of keys whose value is a string.
func (f fields) str(keys keyList) (string, bool) {
	if f.raw != nil {
		return f.raw.str(keys)
	}
	return str(f.m, keys.names...)
}

// lines is countLines of the first of keys whose value is a string (0
// when none is).
func (f fields) lines(keys keyList) int {
	if f.raw != nil {
		return f.raw.lines(keys)
	}
	c, _ := str(f.m, keys.names...)
	return countLines(c)
}

// boolean reports whether the one key of keys is true.
func (f fields) boolean(keys keyList) bool {
	if f.raw != nil {
		return f.raw.boolean(keys)
	}
	b, _ := f.m[keys.names[0]].(bool)
	return b
}

// parseFlatEdit is parseEdit for the tools whose fields are all at the top
// level: Write, Edit, NotebookEdit and file deletions.
func parseFlatEdit(k kind, f fields) (editInfo, error) {
	ei, err := parseFlatEditLater(k, f)
	if err == nil && ei.linesLater {
		ei.lines, ei.linesLater = flatEditLines(f), false
	}
	return ei, err
}

// parseFlatEditLater is parseFlatEdit without counting the lines of an
// Edit that does not replace every occurrence (linesLater is set then):
// a deny of its file, or of a tool the phase does not allow, needs only
// its targets, and the input, which f keeps, is valid already.
// TestRawFieldsAgree and FuzzRawFields compare the two.
func parseFlatEditLater(k kind, f fields) (editInfo, error) {
	var ei editInfo
	err := parseFlatEditInto(k, f, &ei)
	return ei, err
}

// parseFlatEditInto is parseFlatEditLater into *ei, which is zero (a
// prepared call's, read without copying it; on an error *ei holds what
// was read before it, which the caller discards).
func parseFlatEditInto(k kind, f fields, ei *editInfo) error {
	p, ok := f.str(pathList)
	if !ok || p == "" {
		return errNoPath
	}
	if !f.agree(pathList) {
		return errAmbiguousPath
	}
	ei.one = p
	switch k {
	case kWrite:
		if !f.agree(contentList) {
			return errAmbiguousText
		}
		ei.lines = f.lines(contentList)
	case kEdit:
		if !f.agree(oldList) || !f.agree(newList) {
			return errAmbiguousText
		}
		if f.boolean(replaceAllList) || f.boolean(replaceAllCamel) {
			// (The text is kept: replaceAllLines counts it in the file.)
			o, _ := f.str(oldList)
			n, _ := f.str(newList)
			ei.lines = changedLines(o, n)
			ei.replaceAll, ei.old, ei.new = true, o, n
			break
		}
		// (prepared.editLines counts them when a phase asks.)
		ei.linesLater = true
	case kNotebookEdit:
		if !f.agree(notebookList) {
			return errAmbiguousText
		}
		ei.lines = f.lines(notebookList)
	}
	return nil
}

var errAmbiguousText = errors.New("the input gives its text under two names, with different values")

// agree reports whether keys' values that are strings are all one string.
// A harness's tool reads one spelling of a field (Claude Code's file_path,
// opencode's filePath and oldString, Pi's path), the law the first of keys
// it finds: two spellings with different values would have the law decide
// on one file, or count one text, and the tool act on the other.
func (f fields) agree(keys keyList) bool {
	if f.raw != nil {
		return f.raw.agree(keys)
	}
	return stringsAgree(f.m, keys.names...)
}

// stringsAgree is fields.agree of a decoded input, for any keys.
func stringsAgree(m map[string]any, keys ...string) bool {
	first, have := "", false
	for _, k := range keys {
		s, ok := m[k].(string)
		switch {
		case !ok:
		case !have:
			first, have = s, true
		case s != first:
			return false
		}
	}
	return true
}

// patchText finds a patch body: Codex's freeform "input" or hook
// "command" (a string, or an argv whose last word is the patch),
// opencode's "patchText", or "patch".
func patchText(m map[string]any) (string, bool) {
	if s, ok := str(m, patchKeys...); ok {
		return s, true
	}
	if arr, ok := m["command"].([]any); ok && len(arr) > 0 {
		if s, ok := arr[len(arr)-1].(string); ok {
			return s, true
		}
	}
	return "", false
}

// patchKeys are the keys patchText reads a patch from, in its order.
var patchKeys = []string{"input", "patch", "patchText", "patch_text", "command"}

// patchAgrees reports whether every patch m gives (a string under one of
// patchKeys, an argv's last word) is text, the one patchText read: each
// harness's tool reads its own key (Codex's input, opencode's patchText).
func patchAgrees(m map[string]any, text string) bool {
	for _, k := range patchKeys {
		if s, ok := m[k].(string); ok && s != text {
			return false
		}
	}
	if arr, ok := m["command"].([]any); ok && len(arr) > 0 {
		if s, ok := arr[len(arr)-1].(string); ok && s != text {
			return false
		}
	}
	return true
}

// splitLines splits s into lines; a trailing newline does not start a new
// line and "\r\n" counts once. "" has no lines.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.TrimSuffix(s, "\n")
	return strings.Split(s, "\n")
}

// countLines is len(splitLines(s)), without splitting.
func countLines(s string) int {
	if s == "" {
		return 0
	}
	n := strings.Count(s, "\n") + 1
	if strings.HasSuffix(s, "\n") {
		n--
	}
	return n
}

// changedLines counts the lines an old→new replacement changes: after the
// lines both share at the start and at the end, the larger of what remains.
func changedLines(old, new string) int {
	if n, ok := changedLinesInPlace(old, new); ok {
		return n
	}
	return changedLinesSplit(old, new)
}

// changedLinesInPlace is changedLines of text without carriage returns,
// counted without splitting it (nothing of old or new is kept); ok is
// false for text with one.
func changedLinesInPlace(old, new string) (int, bool) {
	if old == new {
		return 0, true // (every line is shared)
	}
	if oneLine(old) && oneLine(new) {
		// The common small edit, a line or less each, that changes
		// something: one line.
		return 1, true
	}
	if strings.IndexByte(old, '\r') < 0 && strings.IndexByte(new, '\r') < 0 {
		return changedLinesLF(old, new), true
	}
	return 0, false
}

// flatEditLines counts the lines an Edit without replace_all changes,
// its old and new text read from f. Read in place, escaped text (an
// edit's newlines, tabs and quotes) is decoded onto the stack, not by
// encoding/json.
func flatEditLines(f fields) int {
	if f.raw != nil {
		o, oesc, _ := f.raw.strRaw(oldList)
		n, nesc, _ := f.raw.strRaw(newList)
		if !oesc && !nesc {
			return changedLines(o, n)
		}
		if lines, ok := changedLinesJSON(o, oesc, n, nesc); ok {
			return lines
		}
	}
	o, _ := f.str(oldList)
	n, _ := f.str(newList)
	return changedLines(o, n)
}

// changedLinesJSON is changedLines of old and new, each given decoded
// or (its esc set) as the JSON string literal it decodes from. The
// decoded text is held on the stack while it is small. ok is false when
// a literal is not valid JSON (the caller decodes it as before).
func changedLinesJSON(old string, oesc bool, new string, nesc bool) (lines int, ok bool) {
	var arr [1024]byte
	buf := arr[:0]
	if oesc {
		n := len(buf)
		if buf, ok = appendUnquoted(buf, old); !ok {
			return 0, false
		}
		old = unsafeString(buf[n:])
	}
	if nesc {
		n := len(buf)
		if buf, ok = appendUnquoted(buf, new); !ok {
			return 0, false
		}
		new = unsafeString(buf[n:])
	}
	if n, ok := changedLinesInPlace(old, new); ok {
		return n, true
	}
	// (Carriage returns: the lines are split, off the stack.)
	return changedLinesSplit(strings.Clone(old), strings.Clone(new)), true
}

// oneLine reports whether s is short and holds no line end ('\n' or
// '\r'): at most one line, whatever splits it.
func oneLine(s string) bool {
	if len(s) > 128 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; c == '\n' || c == '\r' {
			return false
		}
	}
	return true
}

// changedLinesSplit is changedLines on the split lines (any line ends).
func changedLinesSplit(old, new string) int {
	a, b := splitLines(old), splitLines(new)
	for len(a) > 0 && len(b) > 0 && a[0] == b[0] {
		a, b = a[1:], b[1:]
	}
	for len(a) > 0 && len(b) > 0 && a[len(a)-1] == b[len(b)-1] {
		a, b = a[:len(a)-1], b[:len(b)-1]
	}
	return max(len(a), len(b))
}

// changedLinesLF is changedLines for text without carriage returns,
// without splitting it: the common lines are counted in place.
func changedLinesLF(old, new string) int {
	na, nb := countLines(old), countLines(new)
	a := strings.TrimSuffix(old, "\n")
	b := strings.TrimSuffix(new, "\n")
	if old == "" {
		a = ""
	}
	if new == "" {
		b = ""
	}
	// Common leading lines.
	k := 0
	ai, bi := 0, 0 // start of the next line in a and b
	for k < na && k < nb {
		ae, be := lineEnd(a, ai), lineEnd(b, bi)
		if a[ai:ae] != b[bi:be] {
			break
		}
		k++
		ai, bi = ae+1, be+1
	}
	// Common trailing lines, among those left.
	j := 0
	aj, bj := len(a), len(b) // end of the previous line in a and b
	for k+j < na && k+j < nb {
		as, bs := lineStart(a, aj), lineStart(b, bj)
		if a[as:aj] != b[bs:bj] {
			break
		}
		j++
		aj, bj = as-1, bs-1
	}
	return max(na-k-j, nb-k-j)
}

// lineEnd is the end of the line that starts at i in s.
func lineEnd(s string, i int) int {
	if e := strings.IndexByte(s[i:], '\n'); e >= 0 {
		return i + e
	}
	return len(s)
}

// lineStart is the start of the line that ends at e in s.
func lineStart(s string, e int) int {
	return strings.LastIndexByte(s[:e], '\n') + 1
}

// parsePatch reads a Codex patch ("*** Begin Patch", "*** Add File: p",
// "*** Update File: p", "*** Delete File: p", "*** Move to: p") or a
// unified diff ("--- a/p", "+++ b/p", "@@") and returns the files it
// touches and the lines it changes (per hunk, the larger of added and
// removed lines).
func parsePatch(text string) (files []string, lines int) {
	adds, dels := 0, 0
	flush := func() {
		lines += max(adds, dels)
		adds, dels = 0, 0
	}
	seen := map[string]bool{}
	add := func(p string) {
		p = strings.TrimSpace(p)
		if p == "" || p == "/dev/null" || seen[p] {
			return
		}
		seen[p] = true
		files = append(files, p)
	}
	lastMinus := ""
	for _, ln := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		// Codex trims a line before it looks for a file header, so
		// "  *** Update File: x" is a header too.
		if t := strings.TrimSpace(ln); strings.HasPrefix(t, "*** ") {
			ln = t
		}
		switch {
		case strings.HasPrefix(ln, "*** Add File: "):
			flush()
			add(ln[len("*** Add File: "):])
		case strings.HasPrefix(ln, "*** Update File: "):
			flush()
			add(ln[len("*** Update File: "):])
		case strings.HasPrefix(ln, "*** Delete File: "):
			flush()
			add(ln[len("*** Delete File: "):])
		case strings.HasPrefix(ln, "*** Move to: "):
			add(ln[len("*** Move to: "):])
		case strings.HasPrefix(ln, "*** "):
			flush()
		case strings.HasPrefix(ln, "--- "):
			flush()
			lastMinus = stripDiffPrefix(strings.Fields(ln[4:] + " x")[0], "a/")
		case strings.HasPrefix(ln, "+++ "):
			p := stripDiffPrefix(strings.Fields(ln[4:] + " x")[0], "b/")
			if p == "/dev/null" {
				p = lastMinus
			}
			add(p)
		case strings.HasPrefix(ln, "@@"):
			flush()
		case strings.HasPrefix(ln, "+"):
			adds++
		case strings.HasPrefix(ln, "-"):
			dels++
		}
	}
	flush()
	return files, lines
}

func stripDiffPrefix(p, pre string) string {
	if p == "/dev/null" {
		return p
	}
	return strings.TrimPrefix(p, pre)
}

// readTargets returns the paths and patterns a read-type tool names.
func readTargets(m map[string]any) []string {
	var out []string
	for _, k := range append(pathKeys, "pattern", "glob", "dir_path", "directory", "url") {
		if s, ok := m[k].(string); ok && s != "" {
			out = append(out, s)
		}
	}
	return out
}
