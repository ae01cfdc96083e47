package shell

import (
	"strings"
	"testing"
)

var typical = []string{
	"git status",
	"ls -la src/",
	"grep -rn 'TODO' --include='*.go' . | head -20",
	"go test ./... 2>&1 | tail -5",
	"cat > file.go << 'EOF'\npackage main\n\nfunc main() {}\nEOF",
	"cd src && sed -i 's/old/new/g' main.go && git diff --stat",
	"for f in *.go; do wc -l \"$f\"; done",
	"find . -name '*.tmp' -exec rm {} \\; && echo done > log.txt",
	"sudo -u app timeout 30 bash -c 'curl -s https://example.com | jq .'",
}

// BenchmarkAnalyzeTypical analyses everyday commands (< 200 bytes each);
// the budget is 20 µs per command.
func BenchmarkAnalyzeTypical(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Analyze(typical[i%len(typical)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParseTypical only parses the same commands with mvdan.cc/sh:
// the same-run reference the analysis is measured against.
func BenchmarkParseTypical(b *testing.B) {
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := parse(typical[i%len(typical)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnalyzeRunners analyses test-runner and option-heavy commands,
// which go through the option grammars.
func BenchmarkAnalyzeRunners(b *testing.B) {
	cmds := []string{
		"go test -race -count=1 -run 'TestA|TestB' -coverprofile=c.out ./... 2>&1 | tail -20",
		"pytest -x -q -k 'not slow' --junitxml=r.xml -p no:cacheprovider tests/",
		"npm test -- --runInBand -t foo",
		"sort -u -k2 -t, --output=out.csv data/*.csv",
		"tar -czf dist/app.tgz --exclude=node_modules src",
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Analyze(cmds[i%len(cmds)]); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnalyze64KiB analyses a 64 KiB script; the budget is 20 ms.
func BenchmarkAnalyze64KiB(b *testing.B) {
	var sb strings.Builder
	for sb.Len() < 64<<10 {
		for _, t := range typical {
			sb.WriteString(t)
			sb.WriteByte('\n')
		}
	}
	src := sb.String()[:64<<10]
	src = src[:strings.LastIndexByte(src, '\n')+1]
	if _, err := Analyze(src); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(src)))
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := Analyze(src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAnalyzeCorpus analyses every corpus command once per iteration.
func BenchmarkAnalyzeCorpus(b *testing.B) {
	cases := loadCorpus(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, c := range cases {
			Analyze(c.cmd) //nolint:errcheck // parse errors are part of the corpus
		}
	}
}
