// Package testreport turns a test command into honest evidence: which
// runner it starts, whether the run was narrowed to part of the suite (and
// by what), how to make the runner also write a structured report, and
// how many tests that report says ran, passed, failed and were skipped.
//
// Evidence never comes from a pattern over printable output: a test can
// print "ok" or "3 passed" itself. It comes from the runner's own
// structured report (go test -json, JUnit XML, jest's JSON, libtest's JSON).
//
// The package is pure: it runs nothing and reads only the project files it
// is handed (as an fs.FS). Three steps:
//
//	p, ok := testreport.New(argv, env, testreport.Project{FS: os.DirFS(root), Dir: "."})
//	in, err := p.Instrument(reportPath) // argv and env that also write the report
//	// ... run in.Argv with in.Env added; when in.ReportOnStdout, the command's
//	// stdout IS the report: keep it, and show the agent NewRenderer's text.
//	counts, err := testreport.Parse(p.Format, reportBytes)
//	ev := p.Evidence(exitCode, counts, err)
//
// A caller that runs commands (the sandbox launcher, `statewright testrun`)
// does the I/O; package testreport/testrun is one such caller.
package testreport
