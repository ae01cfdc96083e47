package gateway

import "path/filepath"

// workDir is the directory against which upstream u resolves a relative
// path in its arguments, which the policy must resolve them against too:
// a stdio upstream's own dir (relative to this process's working
// directory, as exec takes it), else the directory the manager starts its
// upstreams in. An HTTP upstream's is not known here: the project's.
func (m *Manager) workDir(u *Upstream, project string) string {
	if m == nil || u == nil || u.URL != "" || u.Dir == "" {
		if m != nil && u != nil && u.URL == "" && m.dir != "" {
			return m.dir
		}
		return project
	}
	if filepath.IsAbs(u.Dir) {
		return filepath.Clean(u.Dir)
	}
	if abs, err := filepath.Abs(u.Dir); err == nil {
		return abs
	}
	return project
}
