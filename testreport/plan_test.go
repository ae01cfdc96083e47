package testreport

import (
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/statewright-go/statewright/shell"
)

func files(kv ...string) fstest.MapFS {
	m := fstest.MapFS{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = &fstest.MapFile{Data: []byte(kv[i+1])}
	}
	return m
}

// goProject is a module with tests in two packages.
var goProject = files(
	"go.mod", "module example.com/m\n\ngo 1.22\n",
	"a/a_test.go", "package a",
	"b/b_test.go", "package b",
	"root_test.go", "package m",
)

func TestPlan(t *testing.T) {
	onePkg := files("go.mod", "module example.com/one\n", "x_test.go", "package one")
	pyIni := files("pytest.ini", "[pytest]\naddopts = -m 'not slow' -q\ntestpaths = tests\n")
	pyToml := files("pyproject.toml", "[tool.pytest.ini_options]\naddopts = [\"-k\", \"fast\"]\n")
	pyTomlClean := files("pyproject.toml", "[tool.pytest.ini_options]\naddopts = \"-q --ignore=vendor\"\n")
	setupCfg := files("setup.cfg", "[metadata]\nname = x\n[tool:pytest]\naddopts =\n    --lf\n    -q\n")
	toxIni := files("tox.ini", "[tox]\nenvlist = py3\n[pytest]\naddopts = --deselect tests/test_a.py::test_x\n")
	emptyIniWins := files("pytest.ini", "", "setup.cfg", "[tool:pytest]\naddopts = -k slow\n")
	pkgJest := files("package.json", `{"scripts":{"test":"jest --ci"}}`)
	pkgJestNarrow := files("package.json", `{"scripts":{"test":"tsc && jest --testPathPattern unit"}}`)
	pkgVitest := files("package.json", `{"scripts":{"test":"vitest run"}}`)
	pkgNode := files("package.json", `{"scripts":{"test":"node --test"}}`)
	cargoWs := files("Cargo.toml", "[workspace]\nmembers = [\"a\", \"b\"]\n")
	for _, tc := range []struct {
		name       string
		argv       string
		env        []string
		fs         fstest.MapFS
		dir        string
		runner     Runner
		format     Format
		narrowedBy []string // substrings, one per cause; nil = not narrowed
		listOnly   bool
		notRunner  bool
	}{
		// go test
		{name: "go whole module", argv: "go test ./...", fs: goProject, runner: GoTest, format: FormatGoJSON},
		{name: "go module path pattern", argv: "go test example.com/m/...", fs: goProject, runner: GoTest, format: FormatGoJSON},
		{name: "go from a subdirectory", argv: "go test ../...", fs: goProject, dir: "a", runner: GoTest, format: FormatGoJSON},
		{name: "go -C", argv: "go -C a test ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"package subset"}},
		{name: "go zero-test run", argv: "go test -run NoSuchTest ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -run NoSuchTest"}},
		{name: "go -run=X", argv: "go test -run=^TestA$ ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -run ^TestA$"}},
		{name: "go -run . is everything", argv: "go test -run . ./...", fs: goProject, runner: GoTest, format: FormatGoJSON},
		{name: "go -skip", argv: "go test -skip Slow ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -skip Slow"}},
		{name: "go -short", argv: "go test -short ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -short"}},
		{name: "go -short=false", argv: "go test -short=false ./...", fs: goProject, runner: GoTest, format: FormatGoJSON},
		{name: "go GOFLAGS -short", argv: "go test ./...", env: []string{"GOFLAGS=-count=1 -short"}, fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"GOFLAGS -short"}},
		{name: "go GOFLAGS -run", argv: "go test ./...", env: []string{"GOFLAGS=-run=TestA"}, fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"GOFLAGS -run TestA"}},
		{name: "go -args -test.run", argv: "go test ./... -args -test.run=X", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -args -run X"}},
		{name: "go one package", argv: "go test ./a", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"package subset ./a"}},
		{name: "go subtree", argv: "go test ./a/...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"package subset ./a/..."}},
		{name: "go ./... from a subdirectory", argv: "go test ./...", fs: goProject, dir: "a", runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"package subset"}},
		{name: "go no pattern, many packages", argv: "go test", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"no package pattern"}},
		{name: "go no pattern, one package", argv: "go test -v", fs: onePkg, runner: GoTest, format: FormatGoJSON},
		{name: "go no pattern, files unknown", argv: "go test", runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"no package pattern"}},
		{name: "go single file", argv: "go test x_test.go", fs: onePkg, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"single files"}},
		{name: "go -list", argv: "go test -list . ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, listOnly: true},
		{name: "go -c", argv: "go test -c ./a", fs: goProject, runner: GoTest, format: FormatGoJSON, listOnly: true, narrowedBy: []string{"package subset"}},
		{name: "go build is no test", argv: "go build ./...", notRunner: true},
		{name: "go -C without a value", argv: "go -C", notRunner: true},

		// pytest
		{name: "pytest plain", argv: "pytest", runner: Pytest, format: FormatJUnit},
		{name: "pytest -q .", argv: "pytest -q .", runner: Pytest, format: FormatJUnit},
		{name: "python -m pytest", argv: "python3 -m pytest -x", runner: Pytest, format: FormatJUnit},
		{name: "pytest -k", argv: "pytest -k 'login and not slow'", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv -k 'login and not slow'"}},
		{name: "pytest -kexpr glued", argv: "pytest -klogin", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv -k login"}},
		{name: "pytest -m", argv: "pytest -m smoke", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv -m smoke"}},
		{name: "pytest --lf", argv: "pytest --lf", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv --lf"}},
		{name: "pytest node id", argv: "pytest tests/test_a.py::test_x", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"selects test tests/test_a.py::test_x"}},
		{name: "pytest one file", argv: "pytest tests/test_a.py", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"path subset tests/test_a.py"}},
		{name: "pytest configured testpaths", argv: "pytest tests", fs: files("pytest.ini", "[pytest]\ntestpaths = tests\n"), runner: Pytest, format: FormatJUnit},
		{name: "pytest --co", argv: "pytest --co", runner: Pytest, format: FormatJUnit, listOnly: true},
		{name: "pytest PYTEST_ADDOPTS", argv: "pytest", env: []string{"PYTEST_ADDOPTS=-k fast"}, runner: Pytest, format: FormatJUnit, narrowedBy: []string{"PYTEST_ADDOPTS -k fast"}},
		{name: "pytest.ini addopts -m", argv: "pytest", fs: pyIni, runner: Pytest, format: FormatJUnit, narrowedBy: []string{"pytest.ini addopts -m 'not slow'"}},
		{name: "pytest.ini found from a subdirectory", argv: "pytest", fs: pyIni, dir: "tests", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"pytest.ini addopts -m"}},
		{name: "pyproject addopts list", argv: "pytest", fs: pyToml, runner: Pytest, format: FormatJUnit, narrowedBy: []string{"pyproject.toml addopts -k fast"}},
		{name: "pyproject addopts --ignore defines the suite", argv: "pytest", fs: pyTomlClean, runner: Pytest, format: FormatJUnit},
		{name: "setup.cfg continuation lines", argv: "pytest", fs: setupCfg, runner: Pytest, format: FormatJUnit, narrowedBy: []string{"setup.cfg addopts --lf"}},
		{name: "tox.ini deselect", argv: "pytest", fs: toxIni, runner: Pytest, format: FormatJUnit, narrowedBy: []string{"tox.ini addopts --deselect"}},
		{name: "an empty pytest.ini wins over setup.cfg", argv: "pytest", fs: emptyIniWins, runner: Pytest, format: FormatJUnit},
		{name: "-o addopts overrides the file", argv: "pytest -o addopts=", fs: pyIni, runner: Pytest, format: FormatJUnit},
		{name: "-c names the config", argv: "pytest -c ci.ini", fs: files("ci.ini", "[pytest]\naddopts = -k ci\n"), runner: Pytest, format: FormatJUnit, narrowedBy: []string{"ci.ini addopts -k ci"}},
		{name: "uv run pytest", argv: "uv run pytest -k x", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv -k x"}},
		{name: "python -m unittest", argv: "python3 -m unittest -q", runner: Unittest, format: FormatUnittestJSON},
		{name: "unittest discover", argv: "python3 -m unittest discover -s . -p test*.py", runner: Unittest, format: FormatUnittestJSON},
		{name: "unittest one test", argv: "python -m unittest tests.test_a", runner: Unittest, format: FormatUnittestJSON, narrowedBy: []string{"names tests tests.test_a"}},
		{name: "unittest -k", argv: "python -m unittest -k fast", runner: Unittest, format: FormatUnittestJSON, narrowedBy: []string{"-k fast"}},
		{name: "unittest other pattern", argv: "python -m unittest discover -p '*_slow.py'", runner: Unittest, format: FormatUnittestJSON, narrowedBy: []string{"-p *_slow.py"}},
		{name: "python script is no pytest", argv: "python3 -m http.server", notRunner: true},

		// jest, vitest, node
		{name: "jest", argv: "jest", runner: Jest, format: FormatJestJSON},
		{name: "npx jest -t", argv: "npx jest -t login", runner: Jest, format: FormatJestJSON, narrowedBy: []string{"argv -t login"}},
		{name: "jest path pattern", argv: "jest src/a", runner: Jest, format: FormatJestJSON, narrowedBy: []string{"test path pattern src/a"}},
		{name: "jest --onlyChanged", argv: "jest -o", runner: Jest, format: FormatJestJSON, narrowedBy: []string{"argv -o"}},
		{name: "jest --listTests", argv: "jest --listTests", runner: Jest, format: FormatJestJSON, listOnly: true},
		{name: "vitest run", argv: "vitest run", runner: Vitest, format: FormatJUnit},
		{name: "vitest filter", argv: "vitest run auth", runner: Vitest, format: FormatJUnit, narrowedBy: []string{"test filter auth"}},
		{name: "vitest -t", argv: "npx vitest run -t login", runner: Vitest, format: FormatJUnit, narrowedBy: []string{"argv -t login"}},
		{name: "vitest list", argv: "vitest list", runner: Vitest, format: FormatJUnit, listOnly: true},
		{name: "node --test", argv: "node --test", runner: NodeTest, format: FormatJUnit},
		{name: "node --test dir", argv: "node --test test/", runner: NodeTest, format: FormatJUnit},
		{name: "node --test one file", argv: "node --test test/a.test.js", runner: NodeTest, format: FormatJUnit, narrowedBy: []string{"test file test/a.test.js"}},
		{name: "node --test-name-pattern", argv: "node --test --test-name-pattern=login", runner: NodeTest, format: FormatJUnit, narrowedBy: []string{"--test-name-pattern login"}},
		{name: "node --test-only", argv: "node --test --test-only", runner: NodeTest, format: FormatJUnit, narrowedBy: []string{"--test-only"}},
		{name: "node script is no test", argv: "node server.js", notRunner: true},

		// package.json scripts
		{name: "npm test runs jest", argv: "npm test", fs: pkgJest, runner: Jest, format: FormatJestJSON},
		{name: "npm test -- -t", argv: "npm test -- -t login", fs: pkgJest, runner: Jest, format: FormatJestJSON, narrowedBy: []string{"-t login"}},
		{name: "npm run test narrowed script", argv: "npm run test", fs: pkgJestNarrow, runner: Jest, format: FormatJestJSON, narrowedBy: []string{"package.json test script (or its arguments) --testPathPattern unit"}},
		{name: "yarn test vitest", argv: "yarn test", fs: pkgVitest, runner: Vitest, format: FormatJUnit},
		{name: "npm test node: no pass-through", argv: "npm test", fs: pkgNode, runner: NodeTest},
		{name: "npm test without package.json", argv: "npm test", notRunner: true},
		{name: "npm install is no test", argv: "npm install", fs: pkgJest, notRunner: true},

		// cargo
		{name: "cargo stable: no report", argv: "cargo test", runner: Cargo},
		{name: "cargo nightly", argv: "cargo +nightly test", runner: Cargo, format: FormatLibtestJSON},
		{name: "cargo RUSTC_BOOTSTRAP", argv: "cargo test", env: []string{"RUSTC_BOOTSTRAP=1"}, runner: Cargo, format: FormatLibtestJSON},
		{name: "cargo filter", argv: "cargo test parse", runner: Cargo, narrowedBy: []string{"test name filter parse"}},
		{name: "cargo filter after --", argv: "cargo test -- --exact parse", runner: Cargo, narrowedBy: []string{"test name filter parse"}},
		{name: "cargo --skip", argv: "cargo test -- --skip slow", runner: Cargo, narrowedBy: []string{"--skip slow"}},
		{name: "cargo --lib", argv: "cargo test --lib", runner: Cargo, narrowedBy: []string{"--lib"}},
		{name: "cargo -p in a workspace", argv: "cargo test -p a", fs: cargoWs, runner: Cargo, narrowedBy: []string{"-p a"}},
		{name: "cargo -p in a single crate", argv: "cargo test -p a", fs: files("Cargo.toml", "[package]\nname = \"a\"\n"), runner: Cargo},
		{name: "cargo --no-run", argv: "cargo test --no-run", runner: Cargo, listOnly: true},
		{name: "cargo build is no test", argv: "cargo build", notRunner: true},

		// option grammars (shell/grammars.go): every spelling the runner's
		// own parser accepts, options it does not know, the environment
		{name: "go -test.run", argv: "go test -test.run=TestA ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -run TestA"}},
		{name: "go --run", argv: "go test --run TestA ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -run TestA"}},
		{name: "go -run after the packages", argv: "go test ./... -run TestA", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -run TestA"}},
		{name: "go -test.short=true", argv: "go test -test.short=true ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -short"}},
		{name: "go flag go test does not know", argv: "go test -integration ./...", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -integration (an option statewright does not know"}},
		{name: "go -args the test's own flag", argv: "go test ./... -args -quick", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -args -quick"}},
		{name: "go -args operand", argv: "go test ./... -args only-fast", fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"argv -args only-fast"}},
		{name: "go GOFLAGS -skip, quoted", argv: "go test ./...", env: []string{`GOFLAGS=-count=1 '-skip=Slow|Flaky'`}, fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"GOFLAGS -skip Slow|Flaky"}},
		{name: "go GOFLAGS -test.run", argv: "go test ./...", env: []string{"GOFLAGS=-test.run=TestA"}, fs: goProject, runner: GoTest, format: FormatGoJSON, narrowedBy: []string{"GOFLAGS -run TestA"}},
		{name: "go GOFLAGS build flags only", argv: "go test ./...", env: []string{"GOFLAGS=-mod=mod -count=1 -race"}, fs: goProject, runner: GoTest, format: FormatGoJSON},
		{name: "go the last GOFLAGS wins", argv: "go test ./...", env: []string{"GOFLAGS=-short", "GOFLAGS=-count=1"}, fs: goProject, runner: GoTest, format: FormatGoJSON},
		{name: "pytest clustered -vk", argv: "pytest -vk fast", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv -k fast"}},
		{name: "pytest -m=smoke", argv: "pytest -m=smoke", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv -m smoke"}},
		{name: "pytest --last-failed", argv: "pytest --last-failed", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv --last-failed"}},
		{name: "pytest abbreviated --last-f", argv: "pytest --last-f", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv --last-f"}},
		{name: "pytest --stepwise-skip", argv: "pytest --stepwise-skip", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"--stepwise-skip"}},
		{name: "pytest --deselect=", argv: "pytest --deselect=tests/test_a.py::test_x", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv --deselect tests/test_a.py::test_x"}},
		{name: "pytest -k '' selects everything", argv: "pytest -k ''", runner: Pytest, format: FormatJUnit},
		{name: "pytest @file", argv: "pytest @args.txt", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv @args.txt (pytest reads more arguments"}},
		{name: "pytest plugin option", argv: "pytest --only-smoke", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv --only-smoke (an option statewright does not know"}},
		{name: "pytest --testmon", argv: "pytest --testmon", runner: Pytest, format: FormatJUnit, narrowedBy: []string{"argv --testmon"}},
		{name: "pytest known options that select nothing", argv: "pytest -q -x -ra --tb=short -n 4 -p no:cacheprovider --maxfail 2", runner: Pytest, format: FormatJUnit},
		{name: "pytest --markers", argv: "pytest --markers", runner: Pytest, format: FormatJUnit, listOnly: true, narrowedBy: []string{"--markers"}},
		{name: "pytest --collect-only", argv: "pytest --collect-only", runner: Pytest, format: FormatJUnit, listOnly: true},
		{name: "pytest PYTEST_ADDOPTS clustered", argv: "pytest", env: []string{"PYTEST_ADDOPTS=-qk 'fast or smoke'"}, runner: Pytest, format: FormatJUnit, narrowedBy: []string{"PYTEST_ADDOPTS -k 'fast or smoke'"}},
		{name: "pytest.ini addopts glued -mfast", argv: "pytest", fs: files("pytest.ini", "[pytest]\naddopts = -mfast\n"), runner: Pytest, format: FormatJUnit, narrowedBy: []string{"pytest.ini addopts -m fast"}},
		{name: "unittest clustered -vk", argv: "python -m unittest -vk fast", runner: Unittest, format: FormatUnittestJSON, narrowedBy: []string{"argv -k fast"}},
		{name: "unittest abbreviated --pat", argv: "python -m unittest discover --pat '*_slow.py'", runner: Unittest, format: FormatUnittestJSON, narrowedBy: []string{"argv --pat *_slow.py"}},
		{name: "unittest discover start directory", argv: "python -m unittest discover tests/unit", runner: Unittest, format: FormatUnittestJSON, narrowedBy: []string{"start directory tests/unit"}},
		{name: "unittest discover defaults", argv: "python -m unittest discover . 'test*.py'", runner: Unittest, format: FormatUnittestJSON},
		{name: "jest --test-name-pattern=", argv: "jest --test-name-pattern=login", runner: Jest, format: FormatJestJSON, narrowedBy: []string{"argv --test-name-pattern login"}},
		{name: "jest --testNamePattern word", argv: "jest --testNamePattern login", runner: Jest, format: FormatJestJSON, narrowedBy: []string{"argv --testNamePattern login"}},
		{name: "jest -t glued", argv: "jest -tlogin", runner: Jest, format: FormatJestJSON, narrowedBy: []string{"argv -t login"}},
		{name: "jest --bail takes a path", argv: "jest --bail src/a", runner: Jest, format: FormatJestJSON, narrowedBy: []string{"argv --bail src/a (the runner may read"}},
		{name: "jest --bail 1", argv: "jest --bail 1 --ci", runner: Jest, format: FormatJestJSON},
		{name: "jest --onlyFailures", argv: "jest --onlyFailures", runner: Jest, format: FormatJestJSON, narrowedBy: []string{"argv --onlyFailures"}},
		{name: "jest --findRelatedTests", argv: "jest --findRelatedTests src/a.js", runner: Jest, format: FormatJestJSON, narrowedBy: []string{"argv --findRelatedTests", "test path pattern src/a.js"}},
		{name: "vitest --testNamePattern=", argv: "vitest run --testNamePattern=login", runner: Vitest, format: FormatJUnit, narrowedBy: []string{"argv --testNamePattern login"}},
		{name: "vitest --root", argv: "vitest run --root packages/a", runner: Vitest, format: FormatJUnit, narrowedBy: []string{"argv --root packages/a"}},
		{name: "node --test-name-pattern word", argv: "node --test --test-name-pattern login", runner: NodeTest, format: FormatJUnit, narrowedBy: []string{"argv --test-name-pattern login"}},
		{name: "node NODE_OPTIONS --test-only", argv: "node --test", env: []string{"NODE_OPTIONS=--test-only"}, runner: NodeTest, format: FormatJUnit, narrowedBy: []string{"NODE_OPTIONS --test-only"}},
		{name: "node NODE_OPTIONS harmless", argv: "node --test", env: []string{"NODE_OPTIONS=--max-old-space-size=4096"}, runner: NodeTest, format: FormatJUnit},
		{name: "cargo --exclude", argv: "cargo test --workspace --exclude slow", runner: Cargo, narrowedBy: []string{"--exclude slow"}},
		{name: "cargo --test=", argv: "cargo test --test=integration", runner: Cargo, narrowedBy: []string{"--test integration"}},
		{name: "cargo libtest --bench", argv: "cargo test -- --bench", runner: Cargo, narrowedBy: []string{"--bench"}},
		{name: "cargo libtest --exclude-should-panic", argv: "cargo test -- --exclude-should-panic", runner: Cargo, narrowedBy: []string{"--exclude-should-panic"}},
		{name: "cargo custom harness option", argv: "cargo test -- --smoke", runner: Cargo, narrowedBy: []string{"--smoke (an option statewright does not know"}},
		{name: "cargo unknown option", argv: "cargo test --lib-only", runner: Cargo, narrowedBy: []string{"--lib-only"}},
		{name: "npm test -- --test-name-pattern to jest", argv: "npm test -- --test-name-pattern=login", fs: pkgJest, runner: Jest, format: FormatJestJSON, narrowedBy: []string{"--test-name-pattern login"}},
		{name: "npm test -- --grep to jest", argv: "npm test -- --grep login", fs: pkgJest, runner: Jest, format: FormatJestJSON, narrowedBy: []string{"--grep (an option statewright does not know", "test path pattern login"}},
		{name: "empty", argv: "", notRunner: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			argv := splitShellWords(tc.argv)
			proj := Project{Dir: tc.dir}
			if tc.fs != nil {
				proj.FS = tc.fs
			}
			p, ok := New(argv, tc.env, proj)
			if tc.notRunner {
				if ok {
					t.Fatalf("New(%q) = %+v, want no runner", tc.argv, p)
				}
				return
			}
			if !ok {
				t.Fatalf("New(%q): not recognised", tc.argv)
			}
			if p.Runner != tc.runner || p.Format != tc.format || p.ListOnly != tc.listOnly {
				t.Errorf("New(%q) = runner %q format %q listOnly %v (%s); want %q %q %v", tc.argv, p.Runner, p.Format, p.ListOnly, p.NoReport, tc.runner, tc.format, tc.listOnly)
			}
			if p.Narrowed != (len(tc.narrowedBy) > 0) || len(p.NarrowedBy) != len(tc.narrowedBy) {
				t.Fatalf("New(%q).NarrowedBy = %q, want %q", tc.argv, p.NarrowedBy, tc.narrowedBy)
			}
			for i, want := range tc.narrowedBy {
				if !strings.Contains(p.NarrowedBy[i], want) {
					t.Errorf("NarrowedBy[%d] = %q, want it to contain %q", i, p.NarrowedBy[i], want)
				}
			}
			if p.Format == "" && p.NoReport == "" {
				t.Errorf("no format and no reason")
			}
		})
	}
}

func TestInstrument(t *testing.T) {
	for _, tc := range []struct {
		name     string
		argv     string
		env      []string
		fs       fstest.MapFS
		want     string
		onStdout bool
		render   bool
		err      bool
	}{
		{name: "go", argv: "go test -count=1 ./...", want: "go test -json -count=1 ./...", onStdout: true, render: true},
		{name: "go -json given", argv: "go test -json ./...", want: "go test -json ./...", onStdout: true},
		{name: "go -C", argv: "go -C sub test ./...", want: "go -C sub test -json ./...", onStdout: true, render: true},
		{name: "pytest", argv: "python -m pytest -q", want: "python -m pytest -q --junitxml=/r/x -o junit_family=xunit2"},
		{name: "jest via npx", argv: "npx jest --ci", want: "npx jest --ci --json --outputFile=/r/x"},
		{name: "vitest", argv: "vitest run", want: "vitest run --reporter=default --reporter=junit --outputFile.junit=/r/x"},
		{name: "vitest own reporter", argv: "vitest run --reporter=dot", want: "vitest run --reporter=dot --reporter=junit --outputFile.junit=/r/x"},
		{name: "node", argv: "node --test test/", want: "node --test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=/r/x --test test/"},
		{name: "node own reporter", argv: "node --test --test-reporter=dot", want: "node --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination=/r/x --test --test-reporter=dot"},
		{name: "npm test jest", argv: "npm test", fs: files("package.json", `{"scripts":{"test":"jest"}}`), want: "npm test -- --json --outputFile=/r/x"},
		{name: "npm test jest with args", argv: "npm test -- --ci", fs: files("package.json", `{"scripts":{"test":"jest"}}`), want: "npm test -- --ci --json --outputFile=/r/x"},
		{name: "pnpm test vitest", argv: "pnpm test", fs: files("package.json", `{"scripts":{"test":"vitest run"}}`), want: "pnpm test --reporter=default --reporter=junit --outputFile.junit=/r/x"},
		{name: "cargo nightly", argv: "cargo +nightly test", want: "cargo +nightly test -- -Z unstable-options --format json", onStdout: true, render: true},
		{name: "cargo nightly with --", argv: "cargo +nightly test -- --nocapture", want: "cargo +nightly test -- --nocapture -Z unstable-options --format json", onStdout: true, render: true},
		{name: "cargo stable", argv: "cargo test", err: true},
		{name: "npm test node", argv: "npm test", fs: files("package.json", `{"scripts":{"test":"node --test"}}`), err: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			proj := Project{}
			if tc.fs != nil {
				proj.FS = tc.fs
			}
			p, ok := New(strings.Fields(tc.argv), tc.env, proj)
			if !ok {
				t.Fatalf("not a runner")
			}
			in, err := p.Instrument("/r/x")
			if (err != nil) != tc.err {
				t.Fatalf("Instrument err = %v, want err %v", err, tc.err)
			}
			if err != nil {
				return
			}
			if got := strings.Join(in.Argv, " "); got != tc.want || in.ReportOnStdout != tc.onStdout || in.Render != tc.render {
				t.Errorf("Instrument = %q stdout %v render %v; want %q %v %v", got, in.ReportOnStdout, in.Render, tc.want, tc.onStdout, tc.render)
			}
			// Instrument must not change the plan's own argv.
			if again, _ := p.Instrument("/r/x"); !slices.Equal(again.Argv, in.Argv) {
				t.Errorf("second Instrument = %q", again.Argv)
			}
		})
	}
}

func TestParseINI(t *testing.T) {
	got := ParseINI([]byte("top = dropped\n[pytest]\n# comment\naddopts = -q\n    -k x\n\t--lf\ntestpaths: tests\n; c\n[other]\nkey=v\n[broken\nx = y\n"))
	want := map[string]map[string]string{
		"pytest": {"addopts": "-q\n-k x\n--lf", "testpaths": "tests"},
		"other":  {"key": "v"},
	}
	if len(got) != len(want) {
		t.Fatalf("ParseINI = %q", got)
	}
	for s, kv := range want {
		for k, v := range kv {
			if got[s][k] != v {
				t.Errorf("[%s] %s = %q, want %q", s, k, got[s][k], v)
			}
		}
	}
}

func TestPyprojectPytestOptions(t *testing.T) {
	for _, tc := range []struct {
		in   string
		ok   bool
		want string
	}{
		{"[tool.pytest.ini_options]\naddopts = \"-k x\"\n", true, "-k x"},
		{"[tool.pytest.ini_options]\naddopts = [\"-k\", \"x y\"]\n", true, "'-k' 'x y'"},
		{"[tool.pytest]\naddopts = [\"-m\", \"fast\"]\n", true, "'-m' 'fast'"},
		{"[tool.black]\nline-length = 99\n", false, ""},
		{"not toml = = =", false, ""},
	} {
		vals, lists, ok := PyprojectPytestOptions([]byte(tc.in))
		if ok != tc.ok {
			t.Errorf("%q: ok = %v", tc.in, ok)
			continue
		}
		got := vals["addopts"]
		if l, isList := lists["addopts"]; isList {
			got = joinShellWords(l)
		}
		if got != tc.want {
			t.Errorf("%q: addopts = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestSplitShellWords(t *testing.T) {
	for in, want := range map[string][]string{
		`-k 'a and b' -m "not slow"`: {"-k", "a and b", "-m", "not slow"},
		`a\ b c`:                     {"a b", "c"},
		`'it'"'"'s'`:                 {"it's"},
		`  `:                         nil,
		`"unterminated`:              {"unterminated"},
	} {
		if got := splitShellWords(in); !slices.Equal(got, want) {
			t.Errorf("splitShellWords(%q) = %q, want %q", in, got, want)
		}
	}
}

// Every option the shell package's grammars mark as selecting tests
// (shell.EffFilter) narrows the run, or makes it list-only, in the plan of
// its runner: a filter option added to a grammar cannot be missed here.
// The exceptions select nothing on their own.
func TestEveryFilterOptionNarrows(t *testing.T) {
	notNarrowing := map[string]bool{
		"go test bench": true, "go test test.bench": true, // runs benchmarks besides the tests
		"go test fuzz": true, "go test test.fuzz": true, // fuzzes one target after the tests
		"pytest maxfail": true, // stops after failures: a run that fails does not pass
		"libtest exact":  true, // narrows only with a filter, which counts itself
	}
	for _, r := range []struct {
		grammar string
		argv    func(opt string) []string
	}{
		{"go test", func(o string) []string { return []string{"go", "test", o, "./..."} }},
		{"pytest", func(o string) []string { return []string{"pytest", o} }},
		{"jest", func(o string) []string { return []string{"jest", o} }},
		{"vitest", func(o string) []string { return []string{"vitest", "run", o} }},
		{"node", func(o string) []string { return []string{"node", "--test", o} }},
		{"cargo test", func(o string) []string { return []string{"cargo", "test", o} }},
		{"libtest", func(o string) []string { return []string{"cargo", "test", "--", o} }},
	} {
		g, ok := shell.GrammarFor(r.grammar)
		if !ok {
			t.Fatalf("no grammar %q", r.grammar)
		}
		n := 0
		for _, o := range g.Opts {
			if o.Eff&shell.EffFilter == 0 || len(o.Names) == 0 {
				continue
			}
			n++
			name := o.Names[0]
			if notNarrowing[r.grammar+" "+name] {
				continue
			}
			word := "--" + name
			if g.Style == shell.StyleGo || len(name) == 1 {
				word = "-" + name
			}
			if o.Arg != shell.NoArg {
				word += "=X"
				if len(name) == 1 && g.Style != shell.StyleGo {
					word = "-" + name + "X" // a short option's value is glued on
				}
			}
			argv := r.argv(word)
			proj := Project{} // no files: cargo -p may select one package of a workspace
			if r.grammar == "go test" {
				proj.FS = goProject
			}
			p, ok := New(argv, nil, proj)
			if !ok {
				t.Errorf("%q: not planned", argv)
				continue
			}
			if !p.Narrowed && !p.ListOnly {
				t.Errorf("%q (a %s filter option): neither narrowed nor list-only", strings.Join(argv, " "), r.grammar)
			}
		}
		if n == 0 {
			t.Errorf("grammar %q has no filter options: the check checks nothing", r.grammar)
		}
	}
}
