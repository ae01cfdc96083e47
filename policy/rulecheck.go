package policy

import (
	"net/url"
	"strings"

	"github.com/bmatcuk/doublestar/v4"
	"github.com/statewright-go/statewright/shell"
)

// ruleHit is a rule that matched, and what it matched.
type ruleHit struct {
	rule *permRule
	what string // "`git push origin main`", "Edit of src/a.go", ...
}

// ruleOutcome is what a phase's rules say about a call.
type ruleOutcome struct {
	deny, ask *ruleHit
	// covered: the call as a whole is named by allow rules (or by the ask
	// rule that asks for it): the phase's tool list and capabilities do not
	// apply to it, its limits do.
	covered bool
	// cover marks, for a shell call, the simple commands allow (or ask)
	// rules name.
	cover []bool
	// netOK marks the shell commands whose network the phase's domains
	// grant (all their hosts are granted by name, or the sandbox's proxy
	// enforces the list): they need no Network capability.
	netOK []bool
	// domain is why the domain allow-list (or a domain deny rule) denies
	// the call ("" when it does not): rule domain.
	domain string
}

// evalRules matches a call against the phase's rules. It allocates only
// when the phase has rules.
func (l *Law) evalRules(rs *ruleSet, p *prepared) ruleOutcome {
	var out ruleOutcome
	if rs == nil {
		return out
	}
	call := p.call
	if p.info.kind == kBash {
		sc, err := p.shell()
		if err != nil || sc.err != nil {
			// Bare tool rules still apply; the command is denied later.
			l.toolRules(rs, p, &out)
			return out
		}
		l.shellRules(rs, p, sc.analysis, &out)
		return out
	}
	l.toolRules(rs, p, &out)
	if out.deny != nil {
		return out
	}
	// Specifier rules of non-shell tools.
	switch k := p.info.kind; {
	case isEditKind(k):
		targets, err := p.editTargets()
		if err != nil {
			return out
		}
		var abs []string
		for _, t := range targets {
			abs = append(abs, l.editPath(call, t))
		}
		for _, lst := range [][]*permRule{rs.deny, rs.ask} {
			for _, r := range lst {
				if r.target != rtEdit || r.kinds&bit(k) == 0 {
					continue
				}
				for _, a := range abs {
					if r.path.match(a, l.relTo(call, a), l.home(), true) {
						out.set(r, canonOrRaw(p)+" of "+l.relTo(call, a))
						break
					}
				}
			}
		}
		if out.deny == nil && len(abs) > 0 {
			all := true
			for _, a := range abs {
				if !l.anyAllow(rs, func(r *permRule) bool {
					return r.target == rtEdit && r.kinds&bit(k) != 0 && r.path.match(a, l.relTo(call, a), l.home(), false)
				}) {
					all = false
					break
				}
			}
			out.covered = out.covered || all
		}
	case k == kRead || k == kGrep || k == kGlob || k == kLS:
		// Read deny and ask rules apply to every read through the fence
		// checks of self-protection (Law.phase); allow rules grant here.
		t := readTarget(p)
		if t == "" {
			return out
		}
		a := l.absPath(call, t)
		if r := l.info(call, a).Real; r != "" {
			a = r
		}
		if l.anyAllow(rs, func(r *permRule) bool {
			return r.target == rtRead && r.path.match(a, l.relTo(call, a), l.home(), false)
		}) {
			out.covered = true
		}
	case k == kWebFetch:
		host, ok := fetchHost(p)
		for _, lst := range [][]*permRule{rs.deny, rs.ask} {
			for _, r := range lst {
				if r.target == rtFetch && (r.domain == "" || !ok || hostMatches(r.domain, host)) {
					out.set(r, canonOrRaw(p)+" of "+orUnknown(host))
				}
			}
		}
		switch {
		case out.deny != nil:
		case ok && rs.grants(host):
			out.covered = true
		case rs.restrict && ok:
			out.domain = canonOrRaw(p) + " of " + host + ": the host is not in this phase's allowed_domains (" + strings.Join(rs.grantDomains, ", ") + ")"
		case rs.restrict:
			out.domain = canonOrRaw(p) + " names no host this phase's allowed_domains can check"
		}
	case k == kTask:
		m, _ := p.input()
		name, _ := str(m, "subagent_type", "agent", "name")
		for _, lst := range [][]*permRule{rs.deny, rs.ask, rs.allow} {
			for _, r := range lst {
				if r.target != rtAgent {
					continue
				}
				if ok, _ := doublestar.Match(r.agent, name); ok {
					if r.verdict == Allow {
						out.covered = true
					} else {
						out.set(r, "the subagent "+orUnknown(name))
					}
				}
			}
		}
	}
	if out.ask != nil {
		out.covered = true
	}
	return out
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// set records a deny or ask hit (the first of each).
func (o *ruleOutcome) set(r *permRule, what string) {
	switch r.verdict {
	case Deny:
		if o.deny == nil {
			o.deny = &ruleHit{r, what}
		}
	case Ask:
		if o.ask == nil {
			o.ask = &ruleHit{r, what}
		}
	}
}

func (l *Law) anyAllow(rs *ruleSet, f func(*permRule) bool) bool {
	for _, r := range rs.allow {
		if f(r) {
			return true
		}
	}
	return false
}

// toolRules applies the rules that name the tool itself (a bare name, a
// raw-name prefix).
func (l *Law) toolRules(rs *ruleSet, p *prepared, out *ruleOutcome) {
	raw := p.call.Tool
	for _, lst := range [][]*permRule{rs.deny, rs.ask, rs.allow} {
		for _, r := range lst {
			var hit bool
			switch r.target {
			case rtTool:
				if r.verdict == Allow {
					hit = r.tools.has(p.info, raw)
				} else {
					hit = r.tools.hasExactly(p.info, raw)
				}
			case rtPrefix:
				hit = strings.HasPrefix(raw, r.prefix)
			}
			if !hit {
				continue
			}
			if r.verdict == Allow {
				out.covered = true
			} else {
				out.set(r, raw)
			}
		}
	}
}

// readTarget is the path a read tool reads (its working directory for a
// search without one).
func readTarget(p *prepared) string {
	m, err := p.input()
	if err != nil {
		return ""
	}
	if p.info.kind == kRead {
		t, _ := str(m, pathKeys...)
		return t
	}
	t, _ := str(m, "path", "dir_path", "directory", "file_path")
	if t == "" {
		t = p.call.Cwd
	}
	return t
}

// fetchHost is the host of a fetch tool's URL.
func fetchHost(p *prepared) (string, bool) {
	m, err := p.input()
	if err != nil {
		return "", false
	}
	u, ok := str(m, "url", "uri")
	if !ok || !stringsAgree(m, "url", "uri") {
		// (Two URLs: a tool reads one of them; no host can be checked.)
		return "", false
	}
	return urlHost(u)
}

// urlHost returns the host a URL names, lower-cased ("" and false when it
// names none).
func urlHost(s string) (string, bool) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), "."), true
}

// shellRules applies the rules to every simple command of a shell line.
func (l *Law) shellRules(rs *ruleSet, p *prepared, a *shell.Analysis, out *ruleOutcome) {
	call := p.call
	out.cover = make([]bool, len(a.Commands))
	bare := func(lst []*permRule) *permRule {
		for _, r := range lst {
			if r.target == rtTool && r.tools.hasExactly(p.info, call.Tool) || r.target == rtPrefix && strings.HasPrefix(call.Tool, r.prefix) {
				return r
			}
		}
		return nil
	}
	if r := bare(rs.deny); r != nil {
		out.set(r, "`"+clip(sc0(p), 80)+"`")
		return
	}
	askAll := bare(rs.ask)
	allowAll := false
	for _, r := range rs.allow {
		if r.target == rtTool && r.tools.has(p.info, call.Tool) || r.target == rtPrefix && strings.HasPrefix(call.Tool, r.prefix) {
			allowAll = true
		}
	}
	// A line that sets a proxy or a network program's configuration
	// places none of its network commands.
	redirected := shell.RedirectsNetwork(sc0(p))
	for i := range a.Commands {
		c := &a.Commands[i]
		vs := ruleVariants(c)
		what := "`" + commandText(c) + "`"
		l.networkRules(rs, call, c, i, what, redirected, out)
		for _, lst := range [][]*permRule{rs.deny, rs.ask} {
			for _, r := range lst {
				switch r.target {
				case rtBash:
					if r.matchCommand(c, vs) {
						out.set(r, what)
						out.cover[i] = true
					}
				case rtEdit:
					if t, ok := l.shellWriteHit(call, c, r); ok {
						out.set(r, what+" (it writes "+t+")")
					}
				}
			}
		}
		if out.deny != nil {
			return
		}
		if allowAll {
			out.cover[i] = true
			continue
		}
		for _, r := range rs.allow {
			if r.target == rtBash && r.matchCommand(c, vs) {
				out.cover[i] = true
				break
			}
		}
	}
	if askAll != nil && out.ask == nil {
		out.set(askAll, "`"+clip(sc0(p), 80)+"`")
		for i := range out.cover {
			out.cover[i] = true
		}
	}
	all := len(a.Commands) > 0
	for _, c := range out.cover {
		all = all && c
	}
	out.covered = all
}

// networkRules applies the phase's domains to a shell command that uses
// the network: its hosts when the analysis knows them (shell.NetworkHosts),
// else the OS sandbox's proxy when the call runs sandboxed; where neither
// can tell where it goes, a phase that restricts the network denies it.
// redirected: the line may point the command elsewhere than its words say
// (shell.RedirectsNetwork), so its hosts are not known.
func (l *Law) networkRules(rs *ruleSet, call *ToolCall, c *shell.Command, i int, what string, redirected bool, out *ruleOutcome) {
	if c.Classes&(shell.ClassNetwork|shell.ClassPackageInstall) == 0 {
		return
	}
	hosts, known := shell.NetworkHosts(c)
	if redirected {
		hosts, known = nil, false
	}
	for _, lst := range [][]*permRule{rs.deny, rs.ask} {
		for _, r := range lst {
			if r.target != rtFetch {
				continue
			}
			for _, h := range hosts {
				if r.domain == "" || hostMatches(r.domain, h) {
					out.set(r, what+" (it reaches "+h+")")
				}
			}
			if !known && r.verdict == Ask {
				out.set(r, what+" (where it connects cannot be known before it runs)")
			}
		}
	}
	// A deny rule on a host is a deny list: it holds for every host the
	// analysis knows and, under the sandbox, for every connection (the
	// proxy); a command whose host cannot be known is not denied for it
	// (allowed_domains is the list that fails closed).
	if out.netOK == nil {
		out.netOK = make([]bool, len(out.cover))
	}
	granted := known && len(hosts) > 0
	for _, h := range hosts {
		granted = granted && rs.grants(h)
	}
	switch {
	case granted:
		out.netOK[i] = true
	case known && rs.restrict:
		for _, h := range hosts {
			if !rs.grants(h) && out.domain == "" {
				out.domain = what + " reaches " + h + ", which is not in this phase's allowed_domains (" + strings.Join(rs.grantDomains, ", ") + ")"
			}
		}
	case !known && call.Sandboxed && len(rs.grantDomains) > 0:
		// The sandbox's proxy lets only the granted hosts through.
		out.netOK[i] = true
	case !known && rs.restrict && out.domain == "":
		out.domain = what + " uses the network, and where it connects cannot be known before it runs; this phase allows only " +
			orNone(rs.grantDomains) + ", which the OS sandbox's proxy enforces, but no sandbox is in force for this call, so it is denied. Name the URL or host literally (curl https://host/…, git clone https://host/…)"
	}
}

func orNone(ds []string) string {
	if len(ds) == 0 {
		return "no network at all"
	}
	return strings.Join(ds, ", ")
}

func sc0(p *prepared) string {
	if p.sh != nil {
		return p.sh.src
	}
	return ""
}

// shellWriteHit reports a write target of c that an Edit deny or ask rule
// covers; a target that cannot be known could be one (fail closed), unless
// it is a known tool's output.
func (l *Law) shellWriteHit(call *ToolCall, c *shell.Command, r *permRule) (string, bool) {
	for _, t := range c.Writes {
		if t.Dynamic {
			if toolOutputs[t.Path] || call.Sandboxed && isDescription(t.Path) {
				continue
			}
			return t.Path + ", which cannot be known before it runs", true
		}
		abs := l.editPath(call, t.Path)
		if r.path.match(abs, l.relTo(call, abs), l.home(), true) {
			return l.relTo(call, abs), true
		}
	}
	return "", false
}
