package shell

import (
	"sort"
	"strings"
)

// This file turns git's option table (git_options.go, read from the real
// git by TestGitOptions) into one grammar per subcommand ("git clone",
// "git worktree add"), parsed as git's parse-options parses argv:
// clustered short flags, values attached or in the next word, unique
// prefixes of long options, --no-NAME for any option, --end-of-options.
// The revision and diff options that log, show, diff and rev-list read
// with their own parser (setup_revisions) take exact names only, and -NUM.
// What each option does is said here, by hand: an option that writes,
// runs a program, reads a file or reaches the network. A subcommand with
// such an option is strict: an option it does not know is exec.

// gitEffects are the effects of git's options, by subcommand ("rev" for
// the revision and diff options), as grammar entries naming an option by
// any of its names.
var gitEffects = map[string][]string{
	"rev": {"output :w", "ext-diff :x", "textconv :x", "O :r"},
	// the source repository's upload-pack, the template's hooks, a
	// repository elsewhere
	"clone":     {"upload-pack :x", "template :x", "separate-git-dir :wd", "reference :r", "reference-if-able :r", "bundle-uri :n"},
	"init":      {"template :x", "separate-git-dir :wd"},
	"fetch":     {"upload-pack :x"},
	"pull":      {"upload-pack :x"},
	"ls-remote": {"upload-pack :x"},
	"push":      {"receive-pack :x", "exec :x"},
	"archive":   {"output :w", "remote :n", "exec :x", "add-file :r"},
	"rebase":    {"exec :x"},
	"grep":      {"open-files-in-pager :x", "textconv :x", "f :r"},
	"blame":     {"contents :r", "ignore-revs-file :r", "S :r"},
	"annotate":  {"contents :r", "ignore-revs-file :r", "S :r"},
	"commit":    {"file :r", "template :r", "pathspec-from-file :r"},
	"tag":       {"file :r"},
	"merge":     {"file :r"},
	"notes add": {"file :r"}, "notes append": {"file :r"},
	"format-patch":   {"output-directory :wd"},
	"checkout-index": {"prefix :wd"},
	"help":           {"web :x"},
	// marks files anywhere; unsafe features let the stream name them too
	"fast-import": {"export-marks :w", "export-pack-edges :w", "import-marks :r", "import-marks-if-exists :r",
		"rewrite-submodules-from :r", "rewrite-submodules-to :r", "allow-unsafe-features :x"},
	"add": {"pathspec-from-file :r"}, "reset": {"pathspec-from-file :r"}, "rm": {"pathspec-from-file :r"},
	"checkout": {"pathspec-from-file :r"}, "restore": {"pathspec-from-file :r"}, "stash push": {"pathspec-from-file :r"},
}

// gitExtraOptions are options a subcommand parses outside parse-options,
// which its completion helper does not list (git archive reads its
// archiver's options itself).
var gitExtraOptions = map[string][]string{
	// builtin/diff.c reads these before setup_revisions
	"diff":       {"cached", "staged", "merge-base", "no-index", "base 1", "ours 2", "theirs 3", "0", "q"},
	"diff-index": {"cached", "merge-base", "m"},
	"diff-files": {"base 1", "ours 2", "theirs 3", "0", "q"},
	// fast-import's own parser: --name=value, exact names (git-fast-import(1))
	"fast-import": {"force", "quiet", "stats", "allow-unsafe-features", "cat-blob-fd=", "date-format=", "done",
		"export-marks=", "import-marks=", "import-marks-if-exists=", "rewrite-submodules-from=",
		"rewrite-submodules-to=", "active-branches=", "big-file-threshold=", "depth=", "export-pack-edges=",
		"max-pack-size=", "relative-marks", "no-relative-marks", "signed-tags=", "signed-commits=", "reencode"},
	"archive": {"format=", "prefix=", "add-file=", "add-virtual-file=", "worktree-attributes", "mtime=", "v verbose",
		"l list"},
}

// gitStrategies are the merge strategies built into git; any other name
// runs git-merge-NAME from PATH.
var gitStrategies = map[string]bool{"ort": true, "recursive": true, "resolve": true, "octopus": true, "ours": true, "subtree": true}

func checkGitStrategy(v string) (Effect, string) {
	if gitStrategies[v] {
		return 0, ""
	}
	return EffExec, ""
}

// checkGitConfigValue reads clone -c KEY=VALUE: a key that names a
// program (core.fsmonitor, core.sshCommand, ...) runs it.
func checkGitConfigValue(v string) (Effect, string) {
	if gitConfigKeyDangerous(v) {
		return EffExec, ""
	}
	return 0, ""
}

// gitChecks are options whose effect depends on the value.
var gitChecks = map[string]map[string]func(string) (Effect, string){
	"clone":       {"config": checkGitConfigValue},
	"merge":       {"strategy": checkGitStrategy},
	"pull":        {"strategy": checkGitStrategy},
	"rebase":      {"strategy": checkGitStrategy},
	"cherry-pick": {"strategy": checkGitStrategy},
	"revert":      {"strategy": checkGitStrategy},
}

// addGitGrammars adds "git SUB" and "git SUB SUBSUB" grammars.
func addGitGrammars(add func(*Grammar, ...string)) {
	rev := gitOptionTable["rev"]
	keys := make([]string, 0, len(gitOptionTable))
	for k := range gitOptionTable {
		keys = append(keys, k)
	}
	for k := range gitExtraOptions {
		if _, ok := gitOptionTable[k]; !ok {
			keys = append(keys, k) // a subcommand with its own parser
		}
	}
	for k := range gitRevFamily {
		if _, ok := gitOptionTable[k]; !ok && gitExtraOptions[k] == nil {
			keys = append(keys, k) // it hands all its options to setup_revisions
		}
	}
	sort.Strings(keys)
	for _, key := range keys {
		if key == "rev" {
			continue
		}
		add(gitGrammar(key, rev))
	}
}

// gitGrammar builds one subcommand's grammar.
func gitGrammar(key string, rev []string) *Grammar {
	entries := append(append([]string{}, gitOptionTable[key]...), gitExtraOptions[key]...)
	revFamily := gitRevFamily[key]
	if revFamily {
		// the subcommand's own options win over the revision options of
		// the same name (format-patch -n is --numbered, log's -n a count)
		own := map[string]bool{}
		for _, e := range entries {
			for _, n := range optEntry(e).Names {
				own[n] = true
			}
		}
		for _, e := range rev {
			clash := false
			for _, n := range optEntry(e).Names {
				clash = clash || own[n]
			}
			if !clash {
				entries = append(entries, e)
			}
		}
	}
	g := G("git "+key, StyleGNU, entries...)
	g.Negate, g.EndOfOptions = true, true
	g.Num = gitNumOptions[key] || revFamily
	if _, parseOptions := gitOptionTable[key]; revFamily || !parseOptions {
		g.Abbrev = false // setup_revisions and the subcommands' own parsers match names exactly
	}
	byName := map[string]*Opt{}
	for i := range g.Opts {
		for _, n := range g.Opts[i].Names {
			byName[n] = &g.Opts[i]
		}
	}
	apply := func(k string) {
		for _, e := range gitEffects[k] {
			o := optEntry(e)
			t := byName[o.Names[0]]
			if t == nil {
				if k == "rev" && !revFamily {
					continue
				}
				panic("shell: git " + key + " has no option " + o.Names[0] + " for its effect")
			}
			t.Eff |= o.Eff
		}
	}
	apply(key)
	if revFamily {
		apply("rev")
	}
	sub, _, _ := strings.Cut(key, " ")
	if key == sub {
		for name, check := range gitChecks[sub] {
			if t := byName[name]; t != nil {
				t.Check = check
			} else {
				panic("shell: git " + key + " has no option " + name + " to check")
			}
		}
	}
	return g
}

// gitRevFamily are the subcommands that hand what parse-options leaves
// to setup_revisions: revision and diff options, read by exact name.
var gitRevFamily = map[string]bool{
	"log": true, "show": true, "whatchanged": true, "diff": true, "diff-tree": true, "diff-index": true,
	"diff-files": true, "rev-list": true, "shortlog": true, "format-patch": true, "blame": true,
	"annotate": true, "range-diff": true,
	// they take log's or diff's options too
	"stash show": true, "stash list": true, "reflog": true, "reflog show": true,
}

// gitParse parses a subcommand's arguments with its grammar ("git SUB
// SUBSUB" when the first word names one), records what the options do,
// and returns them in getopt's form with canonical names (the long name
// when the option has one) and the subsubcommand, if any, as the first
// operand.
func (x *cmdCtx) gitParse(sub string, rest []word) (parsed, bool) {
	if len(rest) > 0 && rest[0].lit {
		if g, ok := grammars()["git "+sub+" "+rest[0].val]; ok {
			pa := g.parse(rest[1:])
			x.applyOptions(g, pa)
			p := pa.legacy()
			p.ops = append([]word{rest[0]}, p.ops...)
			return p, true
		}
	}
	g, ok := grammars()["git "+sub]
	if !ok {
		return getopt(rest, "", nil, false), false
	}
	pa := g.parse(rest)
	x.applyOptions(g, pa)
	return pa.legacy(), true
}
