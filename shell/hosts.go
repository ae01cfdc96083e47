package shell

import (
	stdnet "net"
	"net/url"
	"path"
	"strings"
)

// NetworkHosts returns the hosts a network command talks to when they are
// known from its words alone: the hosts of curl's URLs, git's clone URL,
// ssh's and scp's [user@]host, ... (lower-cased, without ports). ok is
// false when the command uses the network and where it goes cannot be
// known before it runs: a word that is not literal, a program this table
// does not know, a remote or registry taken from configuration (git push
// origin, npm install), an option that reads URLs from a file, picks a
// proxy or overrides name resolution (curl --resolve, -x), or a redirect
// the program follows (curl -L, wget by default). A command that does not
// use the network returns nil, true.
func NetworkHosts(c *Command) (hosts []string, ok bool) {
	if c == nil || c.Classes&(ClassNetwork|ClassPackageInstall) == 0 {
		return nil, true
	}
	if c.Dynamic || len(c.Argv) == 0 {
		return nil, false
	}
	for _, w := range innerWordsOf(c) {
		if !w.Literal {
			return nil, false
		}
	}
	for _, w := range c.Words {
		if RedirectsNetwork(w.Text) {
			return nil, false // env HTTPS_PROXY=… curl …
		}
	}
	for _, a := range c.Assigns {
		if RedirectsNetwork(a) {
			return nil, false
		}
	}
	args := c.Argv[1:]
	switch prog := path.Base(c.Argv[0]); prog {
	case "curl":
		return curlHosts(args)
	case "wget":
		return wgetHosts(args)
	case "http", "https", "xh", "xhs":
		return httpieHosts(args)
	case "git":
		return gitHosts(c, args)
	case "ssh":
		return sshHosts(args)
	case "scp", "sftp", "rsync":
		return copyHosts(prog, args)
	case "nc", "ncat", "netcat", "telnet":
		return firstOperandHost(args, "psqwiWXxOT")
	case "ping", "ping6", "traceroute", "tracepath", "mtr":
		return firstOperandHost(args, "cwWiIstlQfmFpqgGzAMNqz")
	}
	return nil, false
}

// RedirectsNetwork reports whether text sets or names something that sends
// a network program elsewhere than the host its words name: a proxy
// variable (http_proxy, HTTPS_PROXY, ALL_PROXY, NO_PROXY, any *_proxy),
// curl's and wget's configuration (CURL_HOME, .curlrc, WGETRC, .wgetrc),
// XDG_CONFIG_HOME (where curl finds .curlrc), or git's and ssh's
// (GIT_SSH*, GIT_PROXY_COMMAND, GIT_CONFIG*). A line that mentions one is
// placed nowhere: it could export it for the next command.
func RedirectsNetwork(text string) bool {
	t := strings.ToLower(text)
	for _, s := range []string{"proxy", "curl_home", "curlrc", "wgetrc", "xdg_config_home", "git_ssh", "git_config"} {
		if strings.Contains(t, s) {
			return true
		}
	}
	return false
}

// innerWordsOf returns the words of c after its wrappers (its own argv
// with literal flags), or all words when they cannot be aligned.
func innerWordsOf(c *Command) []Word {
	n := len(c.Argv)
	if n <= len(c.Words) {
		tail := c.Words[len(c.Words)-n:]
		for i := range tail {
			if tail[i].Text != c.Argv[i] {
				return c.Words
			}
		}
		return tail
	}
	return c.Words
}

// hostOf returns the lower-cased host of a URL, or of a bare host[:port].
func hostOf(s string) (string, bool) {
	if strings.ContainsAny(s, "{}[]*?") && !strings.HasPrefix(s, "[") {
		return "", false // curl's URL globbing makes several hosts
	}
	if i := strings.Index(s, "://"); i > 0 {
		u, err := url.Parse(s)
		if err != nil || u.Hostname() == "" {
			return "", false
		}
		return normHost(u.Hostname())
	}
	// curl takes "example.com/path" and assumes http.
	h := s
	if i := strings.IndexAny(h, "/?#"); i >= 0 {
		h = h[:i]
	}
	if at := strings.LastIndex(h, "@"); at >= 0 {
		h = h[at+1:]
	}
	if hh, _, err := stdnet.SplitHostPort(h); err == nil {
		h = hh
	}
	return normHost(h)
}

func normHost(h string) (string, bool) {
	h = strings.TrimSuffix(strings.ToLower(strings.Trim(h, "[]")), ".")
	if h == "" || strings.ContainsAny(h, " /\\@:") && stdnet.ParseIP(h) == nil {
		return "", false
	}
	return h, true
}

// scanArgs walks args getopt-style: valueShort are short options with a
// value, valueLong long ones. For each option it calls opt(name, value)
// and for each operand operand(word); either may stop the scan by
// returning false.
func scanArgs(args []string, valueShort string, valueLong []string, opt func(name, val string) bool, operand func(string) bool) bool {
	long := map[string]bool{}
	for _, l := range valueLong {
		long[l] = true
	}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			for _, o := range args[i+1:] {
				if !operand(o) {
					return false
				}
			}
			return true
		case strings.HasPrefix(a, "--"):
			name, val, eq := strings.Cut(a[2:], "=")
			if !eq && long[name] && i+1 < len(args) {
				i++
				val = args[i]
			}
			if !opt("--"+name, val) {
				return false
			}
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for j := 1; j < len(a); j++ {
				if strings.IndexByte(valueShort, a[j]) >= 0 {
					val := a[j+1:]
					if val == "" && i+1 < len(args) {
						i++
						val = args[i]
					}
					if !opt("-"+string(a[j]), val) {
						return false
					}
					break
				}
				if !opt("-"+string(a[j]), "") {
					return false
				}
			}
		default:
			if !operand(a) {
				return false
			}
		}
	}
	return true
}

func curlHosts(args []string) ([]string, bool) {
	var hosts []string
	ok := scanArgs(args, "AbcCdDeEFHKmoQrTuUwxXyYzz", []string{
		"user-agent", "cookie", "cookie-jar", "continue-at", "data", "data-ascii", "data-binary", "data-raw", "data-urlencode",
		"dump-header", "referer", "cert", "cert-type", "key", "key-type", "pass", "form", "form-string", "header", "max-time",
		"output", "quote", "range", "request", "upload-file", "user", "write-out", "proxy", "proxy-user", "time-cond",
		"connect-timeout", "retry", "cacert", "capath", "ciphers", "config", "url", "resolve", "connect-to", "interface",
		"socks4", "socks4a", "socks5", "socks5-hostname", "preproxy", "unix-socket", "abstract-unix-socket", "dns-servers",
		"max-filesize", "limit-rate", "expect100-timeout", "retry-delay", "retry-max-time", "oauth2-bearer", "aws-sigv4",
		"output-dir", "trace", "trace-ascii", "stderr", "etag-save", "etag-compare", "json", "variable", "doh-url",
	}, func(name, val string) bool {
		switch name {
		case "--url":
			h, ok := hostOf(val)
			hosts = append(hosts, h)
			return ok
		case "-K", "--config", "-x", "--proxy", "--preproxy", "--resolve", "--connect-to", "--socks4", "--socks4a",
			"--socks5", "--socks5-hostname", "-L", "--location", "--location-trusted", "--unix-socket",
			"--abstract-unix-socket", "--dns-servers", "--doh-url", "--next", "-:", "--variable", "--url-query":
			return false // hosts from a file, a proxy, another address, or a redirect
		}
		return true
	}, func(op string) bool {
		h, ok := hostOf(op)
		hosts = append(hosts, h)
		return ok
	})
	return hosts, ok && len(hosts) > 0
}

func wgetHosts(args []string) ([]string, bool) {
	var hosts []string
	noRedirect := false
	ok := scanArgs(args, "OoaAbBDeiIlPQRtTUwXY", []string{"output-document", "output-file", "append-output", "input-file",
		"base", "execute", "directory-prefix", "tries", "timeout", "wait", "user", "password", "header", "user-agent",
		"post-data", "post-file", "method", "body-data", "body-file", "referer", "load-cookies", "save-cookies",
		"ca-certificate", "certificate", "private-key", "max-redirect", "level", "accept", "reject", "domains",
		"exclude-domains", "include-directories", "exclude-directories", "bind-address", "config"},
		func(name, val string) bool {
			switch name {
			case "-i", "--input-file", "-e", "--execute", "--config", "-r", "--recursive", "-m", "--mirror", "-p", "--page-requisites", "-H", "--span-hosts", "-B", "--base":
				return false
			case "--max-redirect":
				noRedirect = val == "0"
			}
			return true
		}, func(op string) bool {
			h, ok := hostOf(op)
			hosts = append(hosts, h)
			return ok
		})
	return hosts, ok && noRedirect && len(hosts) > 0
}

func httpieHosts(args []string) ([]string, bool) {
	var hosts []string
	ok := scanArgs(args, "abhoAv", []string{"auth", "auth-type", "output", "session", "session-read-only", "proxy", "cert", "cert-key", "verify", "timeout", "pretty", "style", "print", "format-options", "default-scheme"},
		func(name, val string) bool {
			return name != "--proxy" && name != "-F" && name != "--follow"
		}, func(op string) bool {
			if len(hosts) > 0 {
				return true // request items (key=value, Header:value) after the URL
			}
			if m := strings.ToUpper(op); m == op && len(op) <= 7 && !strings.Contains(op, ".") {
				return true // the METHOD
			}
			h, ok := hostOf(op)
			hosts = append(hosts, h)
			return ok
		})
	return hosts, ok && len(hosts) > 0
}

// gitHosts knows clone, and fetch, pull, push and ls-remote given a URL
// (a remote name takes its URL from configuration: unknown).
func gitHosts(c *Command, args []string) ([]string, bool) {
	sub := c.Subcommand
	switch sub {
	case "clone", "fetch", "pull", "push", "ls-remote":
	default:
		return nil, false
	}
	i := 0
	for ; i < len(args) && args[i] != sub; i++ {
		if strings.HasPrefix(args[i], "-c") || args[i] == "--exec-path" || strings.HasPrefix(args[i], "--config-env") {
			return nil, false
		}
	}
	if i >= len(args) {
		return nil, false
	}
	var hosts []string
	first := true
	ok := scanArgs(args[i+1:], "bojuc", []string{"branch", "origin", "upload-pack", "receive-pack", "template", "reference",
		"reference-if-able", "separate-git-dir", "depth", "shallow-since", "shallow-exclude", "jobs", "filter", "config",
		"server-option", "bundle-uri", "exec", "repo", "push-option", "recurse-submodules-default"},
		func(name, val string) bool {
			return name != "-u" && name != "--upload-pack" && name != "--receive-pack" && name != "--exec" && name != "-c" && name != "--config"
		}, func(op string) bool {
			if !first {
				return true // a directory, refspecs
			}
			first = false
			h, ok := gitURLHost(op)
			hosts = append(hosts, h)
			return ok
		})
	return hosts, ok && len(hosts) > 0
}

// gitURLHost returns the host of a git URL (https://, ssh://, git://, or
// scp-like [user@]host:path); a remote name or a local path is not one.
func gitURLHost(s string) (string, bool) {
	if strings.Contains(s, "://") {
		if strings.HasPrefix(s, "file://") || strings.HasPrefix(s, "ext::") {
			return "", false
		}
		return hostOf(s)
	}
	if strings.HasPrefix(s, "ext::") {
		return "", false
	}
	if i := strings.Index(s, ":"); i > 0 && !strings.Contains(s[:i], "/") {
		h := s[:i]
		if at := strings.LastIndex(h, "@"); at >= 0 {
			h = h[at+1:]
		}
		return normHost(h)
	}
	return "", false
}

func sshHosts(args []string) ([]string, bool) {
	var hosts []string
	dest := false
	ok := scanArgs(args, "bcDEeFIiJLlmOoPpQRSWw", nil, func(name, val string) bool {
		switch name {
		case "-J":
			for _, j := range strings.Split(val, ",") {
				h, ok := normHost(strings.Split(strings.TrimPrefix(j[strings.LastIndex(j, "@")+1:], "ssh://"), ":")[0])
				if !ok {
					return false
				}
				hosts = append(hosts, h)
			}
		case "-F", "-o", "-W", "-S", "-O":
			return false // a config, an option, a forward or a control socket: unknown
		}
		return true
	}, func(op string) bool {
		if dest {
			return true // the remote command
		}
		h := op
		if u, err := url.Parse(op); err == nil && u.Scheme == "ssh" {
			h = u.Hostname()
		} else if at := strings.LastIndex(h, "@"); at >= 0 {
			h = h[at+1:]
		}
		nh, ok := normHost(h)
		hosts = append(hosts, nh)
		dest = true
		return ok
	})
	return hosts, ok && dest
}

func copyHosts(prog string, args []string) ([]string, bool) {
	var hosts []string
	valueShort := "cFiJlPoSX"
	if prog == "rsync" {
		valueShort = "eBfTM"
	}
	ok := scanArgs(args, valueShort, []string{"rsh", "rsync-path", "exclude", "include", "filter", "files-from", "password-file", "port", "config"},
		func(name, val string) bool {
			switch name {
			case "-e", "--rsh", "-F", "-o", "-S", "--rsync-path", "--config", "-J":
				return false
			}
			return true
		}, func(op string) bool {
			if strings.HasPrefix(op, "rsync://") || strings.HasPrefix(op, "sftp://") || strings.HasPrefix(op, "scp://") {
				h, ok := hostOf(op)
				if ok {
					hosts = append(hosts, h)
				}
				return ok
			}
			if i := strings.Index(op, ":"); i > 0 && !strings.Contains(op[:i], "/") {
				h, ok := normHost(op[:i][strings.LastIndex(op[:i], "@")+1:])
				if ok {
					hosts = append(hosts, h)
				}
				return ok
			}
			if prog == "sftp" && len(hosts) == 0 {
				h, ok := normHost(op[strings.LastIndex(op, "@")+1:])
				hosts = append(hosts, h)
				return ok
			}
			return true // a local path
		})
	return hosts, ok && len(hosts) > 0
}

func firstOperandHost(args []string, valueShort string) ([]string, bool) {
	var hosts []string
	ok := scanArgs(args, valueShort, nil, func(string, string) bool { return true }, func(op string) bool {
		if len(hosts) > 0 {
			return true
		}
		h, ok := normHost(op)
		hosts = append(hosts, h)
		return ok
	})
	return hosts, ok && len(hosts) > 0
}
