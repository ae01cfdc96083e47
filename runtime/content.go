package runtime

import (
	"io"
	"os"

	"github.com/statewright-go/statewright/policy"
)

// MaxContent bounds the file Content reads for an edit that replaces every
// occurrence (4 MiB); a larger file is not counted (the edit is denied
// where max_edit_lines applies).
const MaxContent = 4 << 20

var _ policy.ContentReader = (*Resolver)(nil)

// Content returns a regular file's content for the policy's line count of
// an Edit with replace_all. It follows links as the edit would; it reports
// false for anything but a regular file of at most MaxContent bytes.
func (r *Resolver) Content(abs string) (string, bool) {
	f, err := os.Open(abs)
	if err != nil {
		return "", false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() > MaxContent {
		return "", false
	}
	b, err := io.ReadAll(io.LimitReader(f, MaxContent+1))
	if err != nil || len(b) > MaxContent {
		return "", false
	}
	return string(b), true
}
