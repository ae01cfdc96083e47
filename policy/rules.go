package policy

import (
	"fmt"
	"path"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/statewright-go/statewright/sandbox"
	"github.com/statewright-go/statewright/shell"
	"github.com/statewright-go/statewright/workflow"
)

// Permission rules (docs/permissions.md, DECISIONS 29): allow, ask and deny
// lists in Claude Code's rule syntax, per phase and at workflow level
// (inherited by every phase). They sit after self-protection and before the
// phase's tool list: a deny rule wins, then an ask rule, then an allow rule.
// Rules are matched with statewright's analysis, never by string prefix: a
// Bash rule is matched against every simple command of the line on its
// parsed words, through wrappers, env prefixes and git's global options; a
// Read rule against every read (tools, shell reads, recursive walks); an
// Edit rule against every write.
//
// allow grants exactly what it names (the tool, or the command with the
// capabilities it needs), never past self-protection or secrets; the
// phase's limits (path scopes, edit and file counts, blocked_env,
// max_iterations) still apply. ask makes a call the law would let through
// with that grant wait for a person.

// ruleTarget is what a rule's tool part names.
type ruleTarget uint8

const (
	rtTool   ruleTarget = iota // a bare tool name (canonical, a harness's raw name, a custom tool)
	rtPrefix                   // a raw-name prefix: "mcp__server__*", "mcp__server", "name*"
	rtBash                     // Bash(command pattern)
	rtRead                     // Read(path pattern)
	rtEdit                     // Edit(path), Write(path), MultiEdit(path), NotebookEdit(path)
	rtFetch                    // WebFetch(domain:host)
	rtAgent                    // Task(name), Agent(name)
)

// pathMode says what a path pattern is relative to (Claude Code's four
// forms, gitignore-style).
type pathMode uint8

const (
	pmProject  pathMode = iota // "path", "./path", "/path": below the project root
	pmAbsolute                 // "//path": from the file system root
	pmHome                     // "~/path": below the home directory
	pmAnywhere                 // a pattern without "/": a name at any depth
)

// pathRule is a compiled path specifier.
type pathRule struct {
	pat  string // doublestar pattern (relative to the mode's root; absolute for pmAbsolute)
	mode pathMode
}

// permRule is one compiled permission rule.
type permRule struct {
	text    string  // as written
	verdict Verdict // Allow, Ask or Deny
	origin  string  // "the workflow" or "phase 'x'"
	pos     workflow.Pos

	target  ruleTarget
	tools   toolList // rtTool: the name compiled like an allowed_tools entry
	prefix  string   // rtPrefix
	kinds   toolBits // rtEdit: the edit kinds it applies to
	bashPat string   // rtBash: the normalised pattern ("" matches every command)
	path    pathRule // rtRead, rtEdit
	domain  string   // rtFetch: host, or "*.host" for its subdomains ("" any)
	agent   string   // rtAgent: a glob over subagent_type ("" any)
}

// describe renders the rule for messages: `Bash(git push:*)` (deny rule of
// phase 'x').
func (r *permRule) describe() string {
	return fmt.Sprintf("the %s rule %s of %s", r.verdict.ruleWord(), r.text, r.origin)
}

func (v Verdict) ruleWord() string {
	switch v {
	case Allow:
		return "allow"
	case Ask:
		return "ask"
	}
	return "deny"
}

// ruleSet is a phase's rules: the workflow's and its own, compiled.
type ruleSet struct {
	deny, ask, allow []*permRule
	// grantDomains are the hosts the phase lets the network reach by name:
	// its allowed_domains and the hosts of WebFetch(domain:…) allow rules.
	// The fetch tools and the shell's network programs may reach them
	// (without the Network capability), and the OS sandbox's proxy lets
	// them through.
	grantDomains []string
	// restrict is set when the phase (or the workflow) has an
	// allowed_domains list: then no other host may be reached, whatever
	// the capabilities say.
	restrict bool
	// denyDomains are the hosts of WebFetch(domain:…) deny rules: never
	// reached, by the fetch tools or the shell.
	denyDomains []string
	// editLimited: an Edit deny or ask rule exists, so a shell write whose
	// target cannot be known could match it.
	editLimited bool
}

// ParseRule checks one permission rule's syntax ("Bash(git push:*)",
// "Read(./secrets/**)", "mcp__github__*") and returns a description of
// what it matches, or an error saying why it is malformed.
func ParseRule(text string) (string, error) {
	r, err := parseRule(text, Deny, "")
	if err != nil {
		return "", err
	}
	switch r.target {
	case rtTool:
		return "every call of " + text, nil
	case rtPrefix:
		return "every tool whose name starts with " + r.prefix, nil
	case rtBash:
		if r.bashPat == "" {
			return "every shell command", nil
		}
		return "shell commands matching " + r.bashPat, nil
	case rtRead:
		return "reads of " + r.path.String(), nil
	case rtEdit:
		return "writes of " + r.path.String(), nil
	case rtFetch:
		if r.domain == "" {
			return "every fetch", nil
		}
		return "network access to " + r.domain, nil
	}
	return "subagents " + r.agent, nil
}

// String renders a path pattern with its root.
func (p pathRule) String() string {
	switch p.mode {
	case pmAbsolute:
		return p.pat
	case pmHome:
		return "~/" + p.pat
	case pmAnywhere:
		return p.pat + " (at any depth)"
	}
	return p.pat + " (in the project)"
}

// claudeEditNames are the rule tool names that take a path and write.
var claudeEditKinds = map[string]toolBits{
	"edit":         editTools | bit(kDelete),
	"write":        bit(kWrite),
	"multiedit":    bit(kMultiEdit),
	"notebookedit": bit(kNotebookEdit),
}

// parseRule compiles a rule as written.
func parseRule(text string, v Verdict, origin string) (*permRule, error) {
	r := &permRule{text: text, verdict: v, origin: origin}
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, fmt.Errorf("empty rule")
	}
	if strings.IndexFunc(t, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0 {
		return nil, fmt.Errorf("rule %q holds a control character", text)
	}
	name, spec, hasSpec := t, "", false
	if i := strings.IndexByte(t, '('); i >= 0 {
		if !strings.HasSuffix(t, ")") {
			return nil, fmt.Errorf("rule %q: a specifier must end with \")\" (Tool(specifier))", text)
		}
		name, spec, hasSpec = t[:i], t[i+1:len(t)-1], true
	} else if strings.ContainsAny(t, ")") {
		return nil, fmt.Errorf("rule %q: unbalanced \")\"", text)
	}
	if name == "" || strings.ContainsAny(name, " \t()") {
		return nil, fmt.Errorf("rule %q: %q is not a tool name", text, name)
	}
	lname := strings.ToLower(name)
	if hasSpec && (spec == "*" || spec == "**") {
		hasSpec, spec = false, "" // Tool(*) is Tool
	}
	if hasSpec && strings.TrimSpace(spec) == "" {
		return nil, fmt.Errorf("rule %q: empty specifier (write %s alone for every call)", text, name)
	}
	if !hasSpec {
		switch {
		case strings.HasPrefix(lname, "mcp__") && strings.HasSuffix(name, "*"):
			r.target, r.prefix = rtPrefix, strings.TrimSuffix(name, "*")
		case strings.HasPrefix(lname, "mcp__") && !strings.Contains(name[len("mcp__"):], "__"):
			// mcp__server: every tool of the server.
			r.target, r.prefix = rtPrefix, name+"__"
		case strings.HasSuffix(name, "*"):
			r.target, r.prefix = rtPrefix, strings.TrimSuffix(name, "*")
		default:
			r.target = rtTool
			r.tools = compileToolList([]string{name})
			r.tools.caps = 0 // a rule names tools, never capability words
		}
		return r, nil
	}
	if strings.HasPrefix(lname, "mcp__") {
		return nil, fmt.Errorf("rule %q: MCP tools take no specifier (mcp__server__tool, mcp__server__*)", text)
	}
	k, known := workflowNames[lname]
	switch {
	case known && k == kBash:
		pat, err := bashPattern(spec)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %v", text, err)
		}
		r.target, r.bashPat = rtBash, pat
	case known && (k == kRead || k == kGrep || k == kGlob || k == kLS):
		if k != kRead {
			return nil, fmt.Errorf("rule %q: path rules are written Read(path); they cover %s too", text, name)
		}
		pr, err := parsePathSpec(spec)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %v", text, err)
		}
		r.target, r.path = rtRead, pr
	case claudeEditKinds[lname] != 0 || known && isEditKind(k):
		pr, err := parsePathSpec(spec)
		if err != nil {
			return nil, fmt.Errorf("rule %q: %v", text, err)
		}
		r.target, r.path = rtEdit, pr
		r.kinds = claudeEditKinds[lname]
		if r.kinds == 0 {
			r.kinds = bit(k)
		}
	case known && k == kWebFetch:
		d, ok := strings.CutPrefix(spec, "domain:")
		d = strings.ToLower(strings.TrimSpace(d))
		if !ok || d == "" || strings.ContainsAny(d, "/: ") || strings.Count(d, "*") > 1 || strings.Contains(d, "*") && !strings.HasPrefix(d, "*.") {
			return nil, fmt.Errorf("rule %q: a WebFetch specifier is domain:HOST or domain:*.HOST", text)
		}
		r.target, r.domain = rtFetch, d
	case known && k == kTask:
		if !doublestar.ValidatePattern(spec) {
			return nil, fmt.Errorf("rule %q: invalid subagent pattern", text)
		}
		r.target, r.agent = rtAgent, spec
	default:
		return nil, fmt.Errorf("rule %q: %s takes no specifier (write %s alone)", text, name, name)
	}
	return r, nil
}

// bashPattern normalises a Bash specifier into the pattern matched against
// a simple command's words joined by single spaces: quotes removed like
// the shell does, "prefix:*" as "prefix*" (the legacy prefix form: the
// command's text starts with the prefix). Shell operators are refused: a rule names one simple
// command, and every simple command of a line is matched on its own.
func bashPattern(spec string) (string, error) {
	spec = strings.TrimSpace(spec)
	if p, ok := strings.CutSuffix(spec, ":*"); ok {
		// The legacy prefix form: the command starts with the prefix, as
		// text ("curl http://site.com/:*" covers every path below it).
		spec = strings.TrimRight(p, " \t") + "*"
		if strings.TrimSpace(p) == "" {
			return "", nil
		}
	}
	if spec == "" {
		return "", nil
	}
	words, err := tokenizeEntry(spec)
	if err != nil {
		if strings.Contains(err.Error(), "shell operator") {
			return "", fmt.Errorf("%v: a rule names one simple command (every command of a line is matched on its own), so it could never match", err)
		}
		return "", err
	}
	return strings.Join(words, " "), nil
}

// parsePathSpec compiles a Read/Edit specifier (gitignore-style, Claude
// Code's four forms): "//abs" from the root, "~/x" from home, "/x" and
// "./x" and "x/y" from the project root, a pattern without "/" (".env",
// "*.pem") at any depth. A directory covers what lies below it.
func parsePathSpec(spec string) (pathRule, error) {
	s := strings.TrimSpace(spec)
	var pr pathRule
	switch {
	case strings.HasPrefix(s, "//"):
		pr = pathRule{pat: "/" + strings.TrimLeft(s, "/"), mode: pmAbsolute}
	case s == "~" || strings.HasPrefix(s, "~/"):
		pr = pathRule{pat: strings.TrimPrefix(strings.TrimPrefix(s, "~"), "/"), mode: pmHome}
	case strings.HasPrefix(s, "/"):
		pr = pathRule{pat: strings.TrimLeft(s, "/"), mode: pmProject}
	case strings.HasPrefix(s, "./"):
		pr = pathRule{pat: strings.TrimPrefix(s, "./"), mode: pmProject}
	case !strings.Contains(strings.TrimSuffix(s, "/"), "/"):
		pr = pathRule{pat: strings.TrimSuffix(s, "/"), mode: pmAnywhere}
	default:
		pr = pathRule{pat: s, mode: pmProject}
	}
	pr.pat = strings.TrimSuffix(pr.pat, "/")
	if pr.mode != pmAbsolute {
		pr.pat = strings.TrimSuffix(pr.pat, "/**")
	}
	if pr.pat == "" || pr.pat == "." {
		pr.pat = "**"
	}
	if strings.Contains(pr.pat, "..") {
		return pr, fmt.Errorf("%q climbs out with \"..\"; write the path from the project, ~/ or //", spec)
	}
	if !doublestar.ValidatePattern(pr.pat) {
		return pr, fmt.Errorf("invalid path pattern %q", spec)
	}
	return pr, nil
}

// fence turns a path rule into an entry of the fence sets the read checks
// use (fences.go), for a host.
func (p pathRule) fence(h *Host, what string) Fence {
	switch p.mode {
	case pmAbsolute:
		return literalOrPattern(p.pat, what)
	case pmHome:
		return secretFence(h, "~/"+p.pat, what)
	case pmAnywhere:
		return Fence{Path: p.pat, Pattern: true, What: what}
	}
	if h != nil && h.ProjectDir != "" {
		return literalOrPattern(path.Join(h.ProjectDir, p.pat), what)
	}
	return Fence{Path: "**/" + p.pat, Pattern: true, What: what}
}

// match reports whether the path rule covers abs (absolute, clean) or an
// ancestor of it. rel is abs relative to the project ("/..." when outside).
// fold matches case-insensitively (deny and ask rules: the safe side).
func (p pathRule) match(abs, rel, home string, fold bool) bool {
	pat := p.pat
	if fold {
		pat, abs, rel = strings.ToLower(pat), strings.ToLower(abs), strings.ToLower(rel)
	}
	anc := func(target string, stop func(string) bool) bool {
		for q := target; ; q = path.Dir(q) {
			if ok, _ := doublestar.Match(pat, q); ok {
				return true
			}
			if stop(q) {
				return false
			}
		}
	}
	switch p.mode {
	case pmAbsolute:
		return anc(abs, func(q string) bool { return q == "/" || q == "." })
	case pmHome:
		if home == "" {
			return false
		}
		if fold {
			home = strings.ToLower(home)
		}
		if abs != home && !strings.HasPrefix(abs, home+"/") {
			return false
		}
		r := strings.TrimPrefix(strings.TrimPrefix(abs, home), "/")
		if r == "" {
			r = "."
		}
		return anc(r, func(q string) bool { return q == "." || !strings.Contains(q, "/") })
	case pmAnywhere:
		for q := abs; q != "/" && q != "." && q != ""; q = path.Dir(q) {
			if ok, _ := doublestar.Match(pat, path.Base(q)); ok {
				return true
			}
		}
		return false
	}
	if strings.HasPrefix(rel, "/") || rel == ".." || strings.HasPrefix(rel, "../") {
		return false
	}
	return anc(rel, func(q string) bool { return q == "." || !strings.Contains(q, "/") })
}

// compileRules compiles a phase's rules: the workflow's, then its own.
func compileRules(def *workflow.Definition, name string, st *workflow.State, h *Host) (*ruleSet, error) {
	rs := &ruleSet{}
	add := func(p *workflow.Permissions, origin string) error {
		if p == nil {
			return nil
		}
		for _, l := range []struct {
			key   string
			v     Verdict
			items []string
			dst   *[]*permRule
		}{{"deny", Deny, p.Deny, &rs.deny}, {"ask", Ask, p.Ask, &rs.ask}, {"allow", Allow, p.Allow, &rs.allow}} {
			for i, text := range l.items {
				r, err := parseRule(text, l.v, origin)
				if err != nil {
					return fmt.Errorf("%s: permissions.%s[%d]: %w", origin, l.key, i, err)
				}
				r.pos = p.FieldPos(fmt.Sprintf("%s[%d]", l.key, i))
				*l.dst = append(*l.dst, r)
				if r.target == rtEdit && l.v != Allow {
					rs.editLimited = true
				}
				if r.target == rtFetch && r.domain != "" {
					switch l.v {
					case Deny:
						rs.denyDomains = append(rs.denyDomains, r.domain)
					case Allow:
						rs.grantDomains = append(rs.grantDomains, r.domain)
					}
				}
			}
		}
		return nil
	}
	if err := add(def.Permissions, "the workflow"); err != nil {
		return nil, err
	}
	if err := add(st.Permissions, "phase '"+name+"'"); err != nil {
		return nil, err
	}
	list := st.AllowedDomains
	if list == nil {
		list = def.AllowedDomains
	}
	if list == nil && len(rs.deny)+len(rs.ask)+len(rs.allow) == 0 {
		return nil, nil
	}
	if list != nil {
		rs.restrict = true
		for _, d := range list {
			d = strings.ToLower(strings.TrimSpace(d))
			if err := checkDomain(d); err != nil {
				return nil, fmt.Errorf("phase '%s': allowed_domains entry %q: %w", name, d, err)
			}
			rs.grantDomains = append(rs.grantDomains, d)
		}
	}
	return rs, nil
}

// grants reports whether the phase lets host be reached by name.
func (rs *ruleSet) grants(host string) bool {
	for _, d := range rs.grantDomains {
		if hostMatches(d, host) {
			return true
		}
	}
	return false
}

// checkDomain validates an allowed_domains entry: a host name or address,
// or "*.host" for its subdomains.
func checkDomain(d string) error {
	h := strings.TrimPrefix(d, "*.")
	if h == "" || strings.ContainsAny(h, "/:*@ ?#") {
		return fmt.Errorf("want a host (example.com) or *.host for its subdomains")
	}
	return nil
}

// hostMatches reports whether host is one the domain pattern names:
// "example.com" exactly, "*.example.com" any subdomain of it (the OS
// sandbox's proxy matches the same way).
func hostMatches(pattern, host string) bool { return sandbox.HostMatch(pattern, host) }

// subjWord is one word of a command as a rule sees it.
type subjWord struct {
	text    string
	literal bool
}

// ruleVariant is one way of reading a simple command for rule matching.
type ruleVariant struct {
	words []subjWord
	// clean: no wrapper or assignment that changes what the command does
	// beyond what its words say, so an allow rule may cover it.
	clean bool
}

// harmlessWrappers change when or how long a command runs, not what it
// does: an allow rule covers the command inside them (Claude Code strips
// timeout, time, nice, nohup and stdbuf; nohup outlives the phase, so it
// is left to the Background capability here).
var harmlessWrappers = map[string]bool{
	"timeout": true, "time": true, "nice": true, "ionice": true, "stdbuf": true, "command": true, "builtin": true,
}

// ruleVariants returns the readings of c a rule is matched against: the
// words as written (wrappers included), the command inside its wrappers,
// and, for git, the command without git's global options (-C dir, -c k=v,
// --git-dir, ...). Assignment prefixes are never words.
func ruleVariants(c *shell.Command) []ruleVariant {
	written := make([]subjWord, len(c.Words))
	for i, w := range c.Words {
		written[i] = subjWord{w.Text, w.Literal}
	}
	clean := len(c.Assigns) == 0
	for _, w := range c.Wrappers {
		if !harmlessWrappers[w] {
			clean = false
		}
	}
	// The words as written name their wrappers themselves: an allow rule
	// that spells them out covers them.
	out := []ruleVariant{{words: written, clean: len(c.Assigns) == 0}}
	if len(written) > 0 && written[0].literal && strings.Contains(written[0].text, "/") {
		// /bin/rm is rm.
		w := append([]subjWord{{path.Base(written[0].text), true}}, written[1:]...)
		out = append(out, ruleVariant{words: w, clean: len(c.Assigns) == 0})
	}
	inner := innerWords(c, written)
	if len(inner) > 0 && inner[0].literal && strings.Contains(inner[0].text, "/") {
		inner = append([]subjWord{{path.Base(inner[0].text), true}}, inner[1:]...)
	}
	if len(c.Wrappers) > 0 && len(inner) > 0 {
		out = append(out, ruleVariant{words: inner, clean: clean})
	}
	if c.Program == "git" && len(inner) > 1 {
		if g, safe, ok := gitWithoutGlobals(inner); ok {
			out = append(out, ruleVariant{words: g, clean: clean && safe})
		}
	}
	return out
}

// innerWords are c's words after its wrappers: Argv, with the literal
// flags of the written words it ends with.
func innerWords(c *shell.Command, written []subjWord) []subjWord {
	n := len(c.Argv)
	if n == 0 {
		return nil
	}
	if n <= len(written) {
		tail := written[len(written)-n:]
		same := true
		for i := range tail {
			if tail[i].text != c.Argv[i] {
				same = false
				break
			}
		}
		if same {
			return tail
		}
	}
	out := make([]subjWord, n)
	for i, a := range c.Argv {
		out[i] = subjWord{a, !strings.ContainsAny(a, "$`*?[{") && !(i == 0 && c.Dynamic)}
	}
	return out
}

// gitWithoutGlobals drops git's global options before the subcommand.
// safe is false when one of them changes what git runs or where (-c,
// --exec-path, --git-dir, --work-tree, --config-env, --namespace): an
// allow rule then does not cover the command.
func gitWithoutGlobals(w []subjWord) (out []subjWord, safe, ok bool) {
	safe = true
	i := 1
	for ; i < len(w); i++ {
		a := w[i].text
		if !w[i].literal {
			return nil, false, false
		}
		if !strings.HasPrefix(a, "-") {
			break
		}
		name, _, eq := strings.Cut(a, "=")
		switch name {
		case "-C":
			i++
		case "-c", "--namespace", "--super-prefix", "--config-env", "--git-dir", "--work-tree":
			safe = false
			if !eq {
				i++
			}
		case "--exec-path":
			safe = false
		case "-P", "--no-pager", "-p", "--paginate", "--no-optional-locks", "--no-replace-objects",
			"--literal-pathspecs", "--glob-pathspecs", "--noglob-pathspecs", "--icase-pathspecs", "--no-lazy-fetch", "--bare":
		default:
			safe = false
		}
	}
	if i == 1 || i >= len(w) {
		return nil, false, false
	}
	out = append([]subjWord{w[0]}, w[i:]...)
	return out, safe, true
}

// matchBash reports whether a command pattern matches the words. With
// possible set (deny and ask rules), a word the analysis cannot know may be
// anything, so it matches any part of the pattern: fail closed. Otherwise
// (allow rules) only a "*" of the pattern matches such a word.
func matchBash(pat string, words []subjWord, possible bool) bool {
	if pat == "" {
		return true
	}
	var b strings.Builder
	for i, w := range words {
		if i > 0 {
			b.WriteByte(' ')
		}
		if w.literal {
			b.WriteString(w.text)
		} else {
			b.WriteByte(0)
		}
	}
	s := b.String()
	if p, ok := strings.CutSuffix(pat, " *"); ok && globMatch(p, s, possible) {
		return true // "ls *" matches "ls" alone too
	}
	return globMatch(pat, s, possible)
}

// globMatch matches s against a pattern in which "*" matches any run of
// characters; a 0 byte in s stands for a word that could be anything.
func globMatch(p, s string, possible bool) bool {
	memo := make(map[[2]int]bool)
	seen := make(map[[2]int]bool)
	var m func(i, j int) bool
	m = func(i, j int) bool {
		k := [2]int{i, j}
		if seen[k] {
			return memo[k]
		}
		seen[k] = true
		var r bool
		switch {
		case i == len(p) && j == len(s):
			r = true
		case i == len(p) && possible && onlyUnknown(s[j:]):
			r = true // the unknown words may expand to nothing
		case j < len(s) && s[j] == 0:
			if possible {
				// The unknown word absorbs nothing more, or one more
				// pattern character.
				r = m(i, j+1) || (i < len(p) && m(i+1, j))
			} else {
				r = i < len(p) && p[i] == '*' && (m(i, j+1) || m(i+1, j))
			}
		case i == len(p):
			r = false
		case p[i] == '*':
			r = m(i+1, j) || (j < len(s) && m(i, j+1))
		default:
			r = j < len(s) && p[i] == s[j] && m(i+1, j+1)
		}
		memo[k] = r
		return r
	}
	return m(0, 0)
}

// onlyUnknown reports whether s is nothing but unknown words and the
// spaces between them.
func onlyUnknown(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != 0 && s[i] != ' ' {
			return false
		}
	}
	return true
}

// matchCommand reports whether a Bash rule matches a simple command: for
// deny and ask, any reading of it (possibly); for allow, a clean reading.
func (r *permRule) matchCommand(c *shell.Command, vs []ruleVariant) bool {
	for _, v := range vs {
		if r.verdict == Allow {
			if v.clean && matchBash(r.bashPat, v.words, false) {
				return true
			}
			continue
		}
		if matchBash(r.bashPat, v.words, true) {
			return true
		}
	}
	return false
}
