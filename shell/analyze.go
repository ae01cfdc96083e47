package shell

// Analyze parses src as bash and classifies every command in it. A line that
// does not parse returns a *ParseError; callers must deny it.
func Analyze(src string) (*Analysis, error) {
	panic("shell.Analyze: not implemented yet")
}
