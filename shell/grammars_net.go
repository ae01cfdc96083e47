package shell

import "strings"

// This file holds the option grammars of the network tools (curl, wget,
// rsync, ssh, scp, sftp) and of the searchers and patchers whose options
// run programs or write files (rg, patch). Each lists every option of the
// real program, so that one it does not know counts as running code.

func addNetGrammars(add func(*Grammar, ...string)) {
	// curl 7.88 (curl --help all; tested in TestGrammarsKnowRealOptions)
	// and the options later versions added. curl accepts unique prefixes
	// of long options (--out is ambiguous, --outp is --output).
	add(G("curl", StyleGNU,
		"abstract-unix-socket=", "alt-svc= :w", "anyauth", "a append", "aws-sigv4=", "basic", "cacert=", "capath=",
		"E cert=", "cert-status", "cert-type=", "ciphers=", "compressed", "compressed-ssh", "K config= :x",
		"connect-timeout=", "connect-to=", "C continue-at=", "b cookie=", "c cookie-jar= :w", "create-dirs",
		"create-file-mode=", "crlf", "crlfile=", "curves=", "d data=", "data-ascii=", "data-binary=", "data-raw=",
		"data-urlencode=", "delegation=", "digest", "q disable", "disable-eprt", "disable-epsv",
		"disallow-username-in-url", "dns-interface=", "dns-ipv4-addr=", "dns-ipv6-addr=", "dns-servers=",
		"doh-cert-status", "doh-insecure", "doh-url=", "D dump-header= :w", "egd-file= :r", "engine= :x",
		"etag-compare= :r", "etag-save= :w", "expect100-timeout=", "f fail", "fail-early", "fail-with-body",
		"false-start", "F form=", "form-escape", "form-string=", "ftp-account=", "ftp-alternative-to-user=",
		"ftp-create-dirs", "ftp-method=", "ftp-pasv", "P ftp-port=", "ftp-pret", "ftp-skip-pasv-ip", "ftp-ssl-ccc",
		"ftp-ssl-ccc-mode=", "ftp-ssl-control", "G get", "g globoff", "happy-eyeballs-timeout-ms=",
		"haproxy-protocol", "I head", "H header=", "h help?", "hostpubmd5=", "hostpubsha256=", "hsts= :w",
		"http0.9", "0 http1.0", "http1.1", "http2", "http2-prior-knowledge", "http3", "http3-only",
		"ignore-content-length", "i include", "k insecure", "interface=", "4 ipv4", "6 ipv6", "json=",
		"j junk-session-cookies", "keepalive-time=", "key=", "key-type=", "krb=", "libcurl= :w", "limit-rate=",
		"l list-only", "local-port=", "L location", "location-trusted", "login-options=", "mail-auth=",
		"mail-from=", "mail-rcpt=", "mail-rcpt-allowfails", "M manual", "max-filesize=", "max-redirs=",
		"m max-time=", "metalink", "negotiate", "n netrc", "netrc-file= :r", "netrc-optional", "no-alpn",
		"N no-buffer", "no-clobber", "no-keepalive", "no-npn", "no-progress-meter", "no-sessionid", "noproxy=",
		"ntlm", "ntlm-wb", "oauth2-bearer=", "o output= :w", "output-dir= :wd", "Z parallel", "parallel-immediate",
		"parallel-max=", "pass=", "path-as-is", "pinnedpubkey=", "post301", "post302", "post303", "preproxy=",
		"# progress-bar", "proto=", "proto-default=", "proto-redir=", "x proxy=", "proxy-anyauth", "proxy-basic",
		"proxy-cacert=", "proxy-capath=", "proxy-cert=", "proxy-cert-type=", "proxy-ciphers=", "proxy-crlfile=",
		"proxy-digest", "proxy-header=", "proxy-insecure", "proxy-key=", "proxy-key-type=", "proxy-negotiate",
		"proxy-ntlm", "proxy-pass=", "proxy-pinnedpubkey=", "proxy-service-name=", "proxy-ssl-allow-beast",
		"proxy-ssl-auto-client-cert", "proxy-tls13-ciphers=", "proxy-tlsauthtype=", "proxy-tlspassword=",
		"proxy-tlsuser=", "proxy-tlsv1", "U proxy-user=", "proxy1.0=", "p proxytunnel", "pubkey=", "Q quote=",
		"random-file= :r", "r range=", "rate=", "raw", "e referer=", "J remote-header-name", "O remote-name",
		"remote-name-all", "R remote-time", "remove-on-error", "X request=", "request-target=", "resolve=",
		"retry=", "retry-all-errors", "retry-connrefused", "retry-delay=", "retry-max-time=", "sasl-authzid=",
		"sasl-ir", "service-name=", "S show-error", "s silent", "socks4=", "socks4a=", "socks5=", "socks5-basic",
		"socks5-gssapi", "socks5-gssapi-nec", "socks5-gssapi-service=", "socks5-hostname=", "Y speed-limit=",
		"y speed-time=", "ssl", "ssl-allow-beast", "ssl-auto-client-cert", "ssl-no-revoke", "ssl-reqd",
		"ssl-revoke-best-effort", "2 sslv2", "3 sslv3", "stderr= :w", "styled-output", "suppress-connect-headers",
		"tcp-fastopen", "tcp-nodelay", "t telnet-option=", "tftp-blksize=", "tftp-no-options", "z time-cond=",
		"tls-max=", "tls13-ciphers=", "tlsauthtype=", "tlspassword=", "tlsuser=", "1 tlsv1", "tlsv1.0", "tlsv1.1",
		"tlsv1.2", "tlsv1.3", "tr-encoding", "trace= :w", "trace-ascii= :w", "trace-time", "unix-socket=",
		"T upload-file= :r", "url=", "url-query=", "B use-ascii", "u user=", "A user-agent=", "v verbose",
		"V version", "xattr",
		// later versions
		"ca-native", "proxy-ca-native", "dump-ca-embed", "proxy-dump-ca-embed", "ip-tos=", "vlan-priority=",
		"mptcp", "skip-existing", "variable= :r", "ssl-sessions= :w", "knownhosts= :r", "sigalgs=", "out-null",
		"follow", "upload-flags=", "ech=", "trace-config=", "trace-ids", "keepalive-cnt=", "ftp-ssl",
		"haproxy-clientip=").with(
		Opt{Names: []string{":", "next"}},
		Opt{Names: []string{"w", "write-out"}, Arg: RequiredArg, Check: checkCurlWriteOut}))

	// GNU Wget 1.21 (wget --help; wget2 shares these spellings). Every
	// boolean option also has a --no- form, which wget resolves itself.
	wget := G("wget", StyleGNU,
		"V version", "h help", "b background", "e execute= :x", "o output-file= :w", "a append-output= :w",
		"d debug", "q quiet", "v verbose", "report-speed=", "i input-file= :r", "F force-html", "B base=",
		"config= :x", "no-config", "rejected-log= :w", "t tries=", "retry-connrefused", "retry-on-http-error=",
		"O output-document= :w", "no-netrc", "c continue", "start-pos=", "progress=", "show-progress",
		"N timestamping", "no-if-modified-since", "no-use-server-timestamps", "S server-response", "spider",
		"T timeout=", "dns-timeout=", "connect-timeout=", "read-timeout=", "w wait=", "waitretry=", "random-wait",
		"no-proxy", "Q quota=", "bind-address=", "limit-rate=", "no-dns-cache", "restrict-file-names=",
		"ignore-case", "4 inet4-only", "6 inet6-only", "prefer-family=", "user=", "password=", "ask-password",
		"use-askpass= :x", "no-iri", "local-encoding=", "remote-encoding=", "unlink", "xattr",
		"x force-directories", "protocol-directories", "P directory-prefix= :wd", "cut-dirs=", "http-user=",
		"http-password=", "no-cache", "default-page=", "E adjust-extension", "ignore-length", "header=",
		"compression=", "max-redirect=", "proxy-user=", "proxy-password=", "referer=", "save-headers",
		"U user-agent=", "no-http-keep-alive", "no-cookies", "load-cookies= :r", "save-cookies= :w",
		"keep-session-cookies", "post-data=", "post-file= :r", "method=", "body-data=", "body-file= :r",
		"content-disposition", "content-on-error", "auth-no-challenge", "secure-protocol=", "https-only",
		"no-check-certificate", "certificate= :r", "certificate-type=", "private-key= :r", "private-key-type=",
		"ca-certificate= :r", "ca-directory=", "crl-file= :r", "pinnedpubkey=", "ciphers=", "no-hsts",
		"hsts-file= :w", "ftp-user=", "ftp-password=", "no-remove-listing", "no-glob", "no-passive-ftp",
		"preserve-permissions", "retr-symlinks", "ftps-implicit", "ftps-resume-ssl", "ftps-clear-data-connection",
		"ftps-fallback-to-ftp", "warc-file= :w", "warc-header=", "warc-max-size=", "warc-cdx", "warc-dedup= :r",
		"no-warc-compression", "no-warc-digests", "no-warc-keep-log", "warc-tempdir= :wd", "r recursive",
		"l level=", "delete-after", "k convert-links", "convert-file-only", "backups=", "K backup-converted",
		"m mirror", "p page-requisites", "strict-comments", "A accept=", "R reject=", "accept-regex=",
		"reject-regex=", "regex-type=", "D domains=", "exclude-domains=", "follow-ftp", "follow-tags=",
		"ignore-tags=", "H span-hosts", "L relative", "I include-directories=", "trust-server-names",
		"X exclude-directories=", "no-verbose nv", "no-clobber nc", "no-parent np", "no-host-directories nH",
		"no-directories nd", "retry-on-host-error", "no-http2", "no-check-hostname", "ca-file=", "https-enforce=",
		"hsts", "iri", "passive-ftp", "remove-listing", "proxy", "netrc", "glob")
	// rsync 3.2 to 3.5 (popt: unique prefixes of long options, --no-OPTION for
	// its booleans, which rsync resolves itself)
	rsync := []string{"v verbose", "info=", "debug=", "stderr=", "q quiet", "no-motd", "c checksum", "a archive",
		"r recursive", "R relative", "no-implied-dirs", "b backup", "backup-dir= :wd", "suffix=",
		"u update", "inplace", "append", "append-verify", "d dirs", "old-dirs old-d", "mkpath", "l links",
		"L copy-links", "copy-unsafe-links", "safe-links", "munge-links", "k copy-dirlinks", "K keep-dirlinks",
		"H hard-links", "p perms", "E executability", "chmod=", "A acls", "X xattrs", "o owner", "g group",
		"devices", "copy-devices", "write-devices", "specials", "D", "t times", "U atimes", "open-noatime",
		"N crtimes", "O omit-dir-times", "J omit-link-times", "super", "fake-super", "S sparse", "preallocate",
		"n dry-run", "W whole-file", "checksum-choice= cc=", "x one-file-system", "B block-size=",
		"e rsh= :x,n", "rsync-path= :x", "existing ignore-non-existing", "ignore-existing",
		"remove-source-files :d", "del :d", "delete :d", "delete-before :d", "delete-during :d",
		"delete-delay :d", "delete-after :d", "delete-excluded :d", "delete-missing-args :d", "ignore-missing-args",
		"ignore-errors", "force", "max-delete=", "max-size=", "min-size=", "max-alloc=", "partial",
		"partial-dir= :wd", "delay-updates", "m prune-empty-dirs", "numeric-ids", "usermap=", "groupmap=",
		"chown=", "timeout=", "contimeout=", "I ignore-times", "size-only", "@ modify-window=",
		"T temp-dir= :wd", "y fuzzy", "compare-dest= :r", "copy-dest= :r", "link-dest= :r",
		"z compress", "compress-choice= zc=", "compress-level= zl=", "skip-compress=", "C cvs-exclude",
		"f filter=", "F", "exclude=", "exclude-from= :r", "include=", "include-from= :r", "files-from= :r",
		"0 from0", "old-args", "s secluded-args protect-args", "trust-sender", "copy-as=", "address=", "port=",
		"sockopts=", "blocking-io", "outbuf=", "stats", "8 8-bit-output", "h human-readable", "progress", "P",
		"i itemize-changes", "M remote-option= :x", "out-format=", "log-file= :w", "log-file-format=",
		"password-file= :r", "early-input= :r", "list-only", "bwlimit=", "stop-after=", "stop-at=", "fsync",
		"write-batch= :w", "only-write-batch= :w", "read-batch= :r", "protocol=", "iconv=", "4 ipv4",
		"6 ipv6", "V version", "help", "daemon :x", "config= :x", "dparam= :x", "no-detach", "no-r",
		"no-recursive", "no-p", "no-perms", "no-o", "no-owner", "no-g", "no-group", "no-t", "no-times",
		"no-D", "no-devices", "no-specials", "no-l", "no-links", "no-inc-recursive", "no-i-r", "no-z",
		"no-compress", "no-W", "no-whole-file", "no-v", "no-verbose", "no-h", "no-human-readable",
		"no-relative", "no-R", "no-implied-dirs", "no-dirs", "no-d", "no-one-file-system", "no-x",
		"no-partial", "no-progress", "no-blocking-io", "no-detach", "no-motd", "no-c", "no-checksum",
		"no-H", "no-hard-links", "no-A", "no-acls", "no-X", "no-xattrs", "no-super", "no-msgs2stderr",
		// rsync 3.4 and 3.5
		"insecure-links", "confine-root=", "drop-D", "compress-threads= zt=", "checksum-seed="}
	rs := G("rsync", StyleGNU, rsync...)
	rs.Negate = true
	add(rs)

	// OpenSSH 9 (getopt: short options only, the first operand ends them)
	add(G("ssh", StyleGNU, "4", "6", "A", "a", "C", "f", "G", "g", "K", "k", "M", "N", "n", "q", "s", "T",
		"t", "V", "v", "X", "x", "Y", "y", "B=", "b=", "c=", "D=", "E= :w", "e=", "F= :x", "I= :x", "i=",
		"J= :x", "L=", "l=", "m=", "O=", "P=", "p=", "R=", "S= :x", "W=", "w=").stop().with(
		Opt{Names: []string{"o"}, Arg: RequiredArg, Check: checkSSHOption},
		Opt{Names: []string{"Q"}, Arg: RequiredArg}))
	scp := []string{"3", "4", "6", "A", "B", "C", "O", "p", "q", "R", "r", "s", "T", "v", "c=", "D= :x",
		"F= :x", "i=", "J= :x", "l=", "P=", "S= :x", "X="}
	add(G("scp", StyleGNU, scp...).with(Opt{Names: []string{"o"}, Arg: RequiredArg, Check: checkSSHOption}))
	add(G("sftp", StyleGNU, "4", "6", "A", "a", "C", "f", "N", "p", "q", "r", "v", "B=", "b= :x", "c=",
		"D= :x", "F= :x", "i=", "J= :x", "l=", "P=", "R=", "S= :x", "s= :x", "X=").stop().with(
		Opt{Names: []string{"o"}, Arg: RequiredArg, Check: checkSSHOption}))
	// GNU patch 2.7 (patch --help): backups go where -B/-Y put them, -g
	// runs RCS or SCCS, and ed scripts (-e) run ed, which runs commands.
	add(G("patch", StyleGNU, "p strip=", "F fuzz=", "l ignore-whitespace", "c context", "e ed :x", "n normal",
		"u unified", "N forward", "R reverse", "i input= :r", "o output= :w", "r reject-file= :w", "D ifdef=",
		"m merge?", "E remove-empty-files", "Z set-utc", "T set-time", "quoting-style=", "b backup",
		"backup-if-mismatch", "no-backup-if-mismatch", "V version-control=", "B prefix= :x", "Y basename-prefix= :x",
		"z suffix=", "g get= :x", "t batch", "f force", "s quiet silent", "verbose", "dry-run", "posix",
		"reject-format=", "binary", "read-only=", "follow-symlinks", "v version", "help", "C check").with(
		Opt{Names: []string{"d", "directory"}, Arg: RequiredArg, Check: checkProjectDir}))

	// ripgrep 14 (lexopt: exact long names, --name=VALUE or --name VALUE,
	// clustered short flags)
	add(G("rg", StyleGNU, "A after-context=", "B before-context=", "C context=", "e regexp=", "f file= :r",
		"g glob=", "iglob=", "j threads=", "m max-count=", "M max-columns=", "r replace=", "t type=",
		"T type-not=", "E encoding=", "d max-depth= maxdepth=", "0 null", "a text", "b byte-offset",
		"c count", "count-matches", "F fixed-strings", "H with-filename", "h help", "I no-filename",
		"i ignore-case", "L follow", "l files-with-matches", "files-without-match", "n line-number",
		"N no-line-number", "o only-matching", "p pretty", "P pcre2", "q quiet", "s case-sensitive",
		"S smart-case", "u unrestricted", "U multiline", "v invert-match", "V version", "w word-regexp",
		"x line-regexp", "z search-zip", ". hidden", "no-hidden", "files", "type-list", "stats", "no-stats",
		"json", "no-json", "vimgrep", "heading", "no-heading", "column", "no-column", "color=", "colors=",
		"pre= :x", "pre-glob=", "no-pre", "hostname-bin= :x", "hyperlink-format=", "ignore-file= :r",
		"ignore-file-case-insensitive", "no-ignore-file-case-insensitive", "no-ignore", "ignore",
		"no-ignore-dot", "ignore-dot", "no-ignore-exclude", "ignore-exclude", "no-ignore-files",
		"ignore-files", "no-ignore-global", "ignore-global", "no-ignore-parent", "ignore-parent",
		"no-ignore-vcs", "ignore-vcs", "no-ignore-messages", "ignore-messages", "no-messages", "messages",
		"no-require-git", "require-git", "no-config", "type-add=", "type-clear=", "sort=", "sortr=",
		"sort-files", "no-sort-files", "max-filesize=", "max-columns-preview", "no-max-columns-preview",
		"binary", "no-binary", "no-text", "no-follow", "crlf", "no-crlf", "null-data", "one-file-system",
		"no-one-file-system", "line-buffered", "no-line-buffered", "block-buffered", "no-block-buffered",
		"mmap", "no-mmap", "auto-hybrid-regex", "no-auto-hybrid-regex", "engine=", "no-pcre2",
		"pcre2-unicode", "no-pcre2-unicode", "no-unicode", "unicode", "multiline-dotall",
		"no-multiline-dotall", "no-multiline", "passthru passthrough", "path-separator=", "field-context-separator=",
		"field-match-separator=", "context-separator=", "no-context-separator", "trim", "no-trim",
		"include-zero", "no-include-zero", "invert-match", "no-invert-match", "debug", "trace",
		"dfa-size-limit=", "regex-size-limit=", "generate=", "glob-case-insensitive",
		"no-glob-case-insensitive", "no-search-zip", "no-encoding", "byte-offset", "no-byte-offset",
		"no-filename", "with-filename", "no-fixed-strings", "no-ignore-case", "pcre2-version", "no-unrestricted",
		"line-number", "no-pretty", "stop-on-nonmatch", "max-columns", "smart-case", "ignore-case",
		"no-column", "quiet", "files-with-matches", "follow"))

	wget.Negate = true
	add(wget.with(Opt{Names: []string{"n"}, Arg: RequiredArg, Check: func(v string) (Effect, string) {
		if strings.Trim(v, "vcdHp") == "" {
			return 0, "" // -nv, -nc, -nd, -nH, -np
		}
		return EffExec, ""
	}}))
}

// checkCurlWriteOut reads curl's --write-out FORMAT: @FILE reads the
// format from a file, %output{FILE} (curl 8.3) sends what follows into a
// file.
func checkCurlWriteOut(v string) (Effect, string) {
	if f, ok := strings.CutPrefix(v, "@"); ok {
		return EffRead, f
	}
	if _, rest, ok := strings.Cut(v, "%output{"); ok {
		f, _, _ := strings.Cut(rest, "}")
		f = strings.TrimPrefix(f, ">>")
		if f == "" {
			return EffWrite | EffExec, ""
		}
		return EffWrite, f
	}
	return 0, ""
}

// checkSSHOption reads an ssh -o KEY=VALUE (or "KEY VALUE"): keys that run
// commands, name other files of options or write files are exec or writes.
func checkSSHOption(v string) (Effect, string) {
	k, val, _ := strings.Cut(strings.TrimSpace(v), "=")
	if i := strings.IndexAny(k, " \t"); i >= 0 {
		k, val = k[:i], strings.TrimSpace(k[i+1:])+val
	}
	switch strings.ToLower(k) {
	case "proxycommand", "localcommand", "permitlocalcommand", "knownhostscommand", "include", "match",
		"proxyjump", "remotecommand", "pkcs11provider", "securitykeyprovider", "setenv", "sendenv",
		"canonicalizehostname", "controlpath", "controlmaster", "identityagent", "forwardagent", "forwardx11",
		"xauthlocation", "tag", "sessiontype", "stdinnull", "forkafterauthentication", "":
		return EffExec, ""
	case "userknownhostsfile", "globalknownhostsfile", "revokedhostkeys":
		return EffWrite, val
	}
	return 0, ""
}
