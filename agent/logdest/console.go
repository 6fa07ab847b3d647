package logdest

import (
	"context"
	"io"
	"log/slog"

	"github.com/pippet/pippet/internal/puppetlog"
)

// Console is the console destination as Puppet's console prints a run's
// lines: notices, info and debug on stdout, warnings and errors on
// stderr, each in Puppet's format (puppetlog).
func Console(stdout, stderr io.Writer, level slog.Level) slog.Handler {
	return &console{out: puppetlog.New(stdout, level), err: puppetlog.New(stderr, level)}
}

func (c *console) pick(l slog.Level) slog.Handler {
	if l >= slog.LevelWarn {
		return c.err
	}
	return c.out
}

func (c *console) Enabled(ctx context.Context, l slog.Level) bool {
	return c.pick(l).Enabled(ctx, l)
}

func (c *console) Handle(ctx context.Context, r slog.Record) error {
	return c.pick(r.Level).Handle(ctx, r)
}

func (c *console) WithAttrs(as []slog.Attr) slog.Handler {
	return &console{out: c.out.WithAttrs(as), err: c.err.WithAttrs(as)}
}

func (c *console) WithGroup(name string) slog.Handler {
	return &console{out: c.out.WithGroup(name), err: c.err.WithGroup(name)}
}

// console is Console's handler.
type console struct {
	out, err slog.Handler
}
