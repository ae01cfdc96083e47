package telemetry

import (
	"context"
	"io"
	"log/slog"
	"os"
	"regexp"
	"strings"

	"go.opentelemetry.io/contrib/bridges/otelslog"
)

// LogOptions configure NewLogger.
type LogOptions struct {
	// W receives the log lines: JSON when it is not a terminal, text when
	// it is one (a person reading serve's output).
	W io.Writer
	// Level is the lowest level logged (default Info).
	Level slog.Level
	// OTel, when its Logs provider is set, also receives every record
	// (over OTLP).
	OTel *OTel
	// Unredacted keeps inputs and paths in the records (see Redact).
	Unredacted bool
}

// NewLogger returns a structured logger for a long-lived server. It never
// writes to a hook's streams: hooks log to the decider's file (DECISIONS 33).
func NewLogger(opts LogOptions) *slog.Logger {
	ho := &slog.HandlerOptions{Level: opts.Level}
	var h slog.Handler
	if isTerminal(opts.W) {
		h = slog.NewTextHandler(opts.W, ho)
	} else {
		h = slog.NewJSONHandler(opts.W, ho)
	}
	if opts.OTel != nil && opts.OTel.Logs != nil {
		h = slog.NewMultiHandler(h, &leveled{Handler: otelslog.NewHandler("github.com/statewright-go/statewright", otelslog.WithLoggerProvider(opts.OTel.Logs)), min: opts.Level})
	}
	if !opts.Unredacted {
		h = Redact(h)
	}
	return slog.New(h)
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// leveled gives a handler a minimum level.
type leveled struct {
	slog.Handler
	min slog.Level
}

func (l *leveled) Enabled(ctx context.Context, lv slog.Level) bool {
	return lv >= l.min && l.Handler.Enabled(ctx, lv)
}
func (l *leveled) WithAttrs(as []slog.Attr) slog.Handler {
	return &leveled{Handler: l.Handler.WithAttrs(as), min: l.min}
}
func (l *leveled) WithGroup(n string) slog.Handler {
	return &leveled{Handler: l.Handler.WithGroup(n), min: l.min}
}

// redactedKeys are attribute keys whose values are a call's input or a
// path: dropped whole.
var redactedKeys = map[string]bool{
	"input": true, "tool_input": true, "output": true, "command": true, "args": true,
	"path": true, "file": true, "file_path": true, "cwd": true, "dir": true, "project_dir": true, "store": true,
}

// absPath finds absolute paths in text: a slash path of two or more
// components, or a Windows drive or UNC path.
var absPath = regexp.MustCompile(`(?:/[^/\s"'=:,;()]+){2,}/?|[A-Za-z]:\\[^\s"',;()]*|\\\\[^\s"',;()\\]+\\[^\s"',;()]*`)

// RedactText replaces the absolute paths in s with "[path]".
func RedactText(s string) string {
	if !strings.ContainsAny(s, `/\`) {
		return s
	}
	return absPath.ReplaceAllString(s, "[path]")
}

// Redact wraps h so that inputs and paths stay out of the records: the
// values of input- and path-named attributes become "[redacted]", and
// absolute paths inside messages, strings and errors become "[path]".
func Redact(h slog.Handler) slog.Handler { return &redactor{h} }

type redactor struct{ h slog.Handler }

func (r *redactor) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *redactor) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, RedactText(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(redactAttr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactor) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = redactAttr(a)
	}
	return &redactor{r.h.WithAttrs(red)}
}

func (r *redactor) WithGroup(name string) slog.Handler { return &redactor{r.h.WithGroup(name)} }

func redactAttr(a slog.Attr) slog.Attr {
	if redactedKeys[strings.ToLower(a.Key)] {
		return slog.String(a.Key, "[redacted]")
	}
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, RedactText(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = redactAttr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, RedactText(err.Error()))
		}
		if s, ok := v.Any().(interface{ String() string }); ok {
			return slog.String(a.Key, RedactText(s.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
