package shell

import (
	"slices"
	"testing"
)

func TestNetworkHosts(t *testing.T) {
	for _, tc := range []struct {
		cmd   string
		hosts []string
		ok    bool
	}{
		{"curl https://api.example.com/v1", []string{"api.example.com"}, true},
		{"curl -s -H 'Accept: x' https://API.Example.com:8443/v1 -o out.json", []string{"api.example.com"}, true},
		{"curl --url https://a.example/x https://b.example/y", []string{"a.example", "b.example"}, true},
		{"curl example.com/path", []string{"example.com"}, true},
		{"curl -L https://a.example/", nil, false},
		{"curl --resolve a.example:443:10.0.0.1 https://a.example/", nil, false},
		{"curl -x http://proxy:3128 https://a.example/", nil, false},
		{"curl -K urls.txt", nil, false},
		{"curl https://{a,b}.example/", nil, false},
		{"curl $URL", nil, false},
		{"curl https://$HOST/x", nil, false},
		{"wget https://a.example/f", nil, false},
		{"wget --max-redirect=0 https://a.example/f", []string{"a.example"}, true},
		{"wget -i list.txt --max-redirect=0", nil, false},
		{"git clone https://github.com/x/y.git dir", []string{"github.com"}, true},
		{"git clone git@github.com:x/y.git", []string{"github.com"}, true},
		{"git -C sub fetch https://gitlab.com/x/y", []string{"gitlab.com"}, true},
		{"git push origin main", nil, false},
		{"git clone --upload-pack=x https://github.com/x/y", nil, false},
		{"git clone ext::sh -c x", nil, false},
		{"ssh deploy@prod.example.com uptime", []string{"prod.example.com"}, true},
		{"ssh -p 2222 -i key host.example", []string{"host.example"}, true},
		{"ssh -J bastion.example internal.example", []string{"bastion.example", "internal.example"}, true},
		{"ssh -o ProxyCommand=x host.example", nil, false},
		{"scp f.txt user@files.example:/tmp/", []string{"files.example"}, true},
		{"rsync -av src/ backup.example:/srv/", []string{"backup.example"}, true},
		{"rsync -e 'ssh -p 2' src/ b.example:/srv/", nil, false},
		{"nc -z db.example 5432", []string{"db.example"}, true},
		{"npm install left-pad", nil, false},
		{"pip install requests", nil, false},
		{"http GET https://api.example.com/x a=b", []string{"api.example.com"}, true},
		{"ls -la", nil, true},
		{"HTTPS_PROXY=http://evil.example:8080 curl https://a.example/", nil, false},
		{"env https_proxy=http://evil.example curl https://a.example/", nil, false},
		{"CURL_HOME=/tmp/x curl https://a.example/", nil, false},
		{"GIT_SSH_COMMAND='ssh -o ProxyCommand=x' git clone git@github.com:x/y", nil, false},
	} {
		a, err := Analyze(tc.cmd)
		if err != nil {
			t.Fatalf("%q: %v", tc.cmd, err)
		}
		var hosts []string
		ok := true
		for i := range a.Commands {
			h, k := NetworkHosts(&a.Commands[i])
			hosts = append(hosts, h...)
			ok = ok && k
		}
		if ok != tc.ok || tc.ok && !slices.Equal(hosts, tc.hosts) {
			t.Errorf("%q: hosts %v ok %v, want %v %v", tc.cmd, hosts, ok, tc.hosts, tc.ok)
		}
	}
}

// FuzzNetworkHosts: never a panic, and a known host is never empty and
// holds no separator a URL could smuggle a second host through.
func FuzzNetworkHosts(f *testing.F) {
	for _, s := range []string{"curl https://a.example/x", "ssh -J a,b c", "git clone git@h:x", "scp a:b c", "wget --max-redirect=0 x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		a, err := Analyze(src)
		if err != nil {
			return
		}
		for i := range a.Commands {
			hosts, ok := NetworkHosts(&a.Commands[i])
			if !ok {
				continue
			}
			for _, h := range hosts {
				if h == "" {
					t.Fatalf("%q: an empty host reported as known", src)
				}
			}
		}
	})
}
