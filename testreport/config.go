package testreport

import (
	"strings"

	"github.com/BurntSushi/toml"
)

// ParseINI reads an ini file the way pytest's iniconfig does: "[section]"
// headers, "key = value" or "key: value" lines, continuation lines that
// start with whitespace (joined with a newline), and "#" or ";" comment
// lines. It never fails: lines it cannot read are skipped. Keys before the
// first section are dropped.
func ParseINI(b []byte) map[string]map[string]string {
	out := map[string]map[string]string{}
	var sec map[string]string
	lastKey := ""
	for _, line := range strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if trimmed == "" || trimmed[0] == '#' || trimmed[0] == ';' {
			continue
		}
		if line[0] == ' ' || line[0] == '\t' {
			if sec != nil && lastKey != "" {
				if sec[lastKey] == "" {
					sec[lastKey] = trimmed
				} else {
					sec[lastKey] += "\n" + trimmed
				}
			}
			continue
		}
		if trimmed[0] == '[' {
			end := strings.IndexByte(trimmed, ']')
			if end < 0 {
				sec, lastKey = nil, ""
				continue
			}
			name := strings.TrimSpace(trimmed[1:end])
			if out[name] == nil {
				out[name] = map[string]string{}
			}
			sec, lastKey = out[name], ""
			continue
		}
		i := strings.IndexAny(trimmed, "=:")
		if i <= 0 || sec == nil {
			lastKey = ""
			continue
		}
		lastKey = strings.TrimSpace(trimmed[:i])
		sec[lastKey] = strings.TrimSpace(trimmed[i+1:])
	}
	return out
}

// PyprojectPytestOptions reads pytest's options from a pyproject.toml:
// the [tool.pytest.ini_options] table (pytest 6+), or [tool.pytest] (pytest
// 9's native table). String values land in vals, arrays of strings in
// lists; ok is false when the file has neither table or is not TOML.
func PyprojectPytestOptions(b []byte) (vals map[string]string, lists map[string][]string, ok bool) {
	var doc struct {
		Tool struct {
			Pytest map[string]any `toml:"pytest"`
		} `toml:"tool"`
	}
	if _, err := toml.Decode(string(b), &doc); err != nil || doc.Tool.Pytest == nil {
		return nil, nil, false
	}
	table := doc.Tool.Pytest
	if io, isTable := table["ini_options"].(map[string]any); isTable {
		table = io
	}
	vals, lists = map[string]string{}, map[string][]string{}
	for k, v := range table {
		switch x := v.(type) {
		case string:
			vals[k] = x
		case []any:
			var l []string
			for _, e := range x {
				if s, isStr := e.(string); isStr {
					l = append(l, s)
				}
			}
			lists[k] = l
		}
	}
	return vals, lists, true
}
