package main

import (
	"bytes"
	"context"
	"flag"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/internal/puppetlog"
	"github.com/pippet/pippet/protocol"
)

func TestRealMainFlags(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		code       int
		stdout     string
		stderrPart string
	}{
		{"version", []string{"--version"}, exitOK, versionLine(), ""},
		{"help", []string{"--help"}, exitOK, "", ""},
		{"bad flag", []string{"--frobnicate"}, exitUsage, "", "flag provided but not defined: --frobnicate\nRun 'receiver --help' for usage.\n"},
		{"bad value", []string{"--max-line", "x"}, exitUsage, "", `invalid value "x" for flag --max-line`},
		{"bad level", []string{"--log-level", "loud"}, exitUsage, "", `invalid --log-level "loud"`},
		{"unknown subcommand", []string{"bogus"}, exitUsage, "", `unknown subcommand "bogus" (known: agent, apply, describe, facts, filebucket, resource)`},
		{"bad max line", []string{"--max-line", "0"}, exitUsage, "", "--max-line must be positive"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := realMain(context.Background(), tt.args, strings.NewReader(""), &out, &errb)
			assert.Equal(t, tt.code, code)
			if tt.stdout != "" {
				assert.Equal(t, tt.stdout, out.String())
			}
			assert.Contains(t, errb.String(), tt.stderrPart)
		})
	}
}

func TestHelpDocumentsProtocol(t *testing.T) {
	var out, errb bytes.Buffer
	assert.Equal(t, exitOK, realMain(context.Background(), []string{"--help"}, strings.NewReader(""), &out, &errb))
	assert.Empty(t, errb.String(), "help goes to stdout only")
	assert.Equal(t, 1, strings.Count(out.String(), "Usage:"))
	for _, want := range []string{`"params"`, "TYPE TITLE YAML", protocol.Banner[:len(protocol.Banner)-1], "--max-line", "SIGTERM", "-compat", "Exit status"} {
		assert.Contains(t, out.String(), want)
	}
	// Every flag, spelled with two dashes, none with one.
	newFlagSet(&options{}).VisitAll(func(f *flag.Flag) {
		assert.Regexp(t, `(?m)^  --`+f.Name+`( [A-Z]+)?\n      \S`, out.String())
	})
	assert.NotRegexp(t, `(?m)^\s+-[a-z]`, out.String())
}

// The protocol page's table of flags has a row for every flag.
func TestDocsListEveryFlag(t *testing.T) {
	b, err := os.ReadFile("../../docs/protocol.md")
	require.NoError(t, err)
	page := string(b)
	start := strings.Index(page, "\n## Flags\n")
	require.GreaterOrEqual(t, start, 0)
	table := page[start+1:]
	table = table[:strings.Index(table[len("## Flags"):], "\n#")+len("## Flags")]
	newFlagSet(&options{}).VisitAll(func(f *flag.Flag) {
		assert.Regexp(t, "(?m)^\\| `--"+f.Name+"[ `]", table, "docs/protocol.md's flag table lacks --%s", f.Name)
	})
}

func TestSubcommandDispatch(t *testing.T) {
	var got []string
	subcommands["test-sub"] = func(_ context.Context, args []string, stdout, _ io.Writer) int {
		got = args
		io.WriteString(stdout, "sub ran\n")
		return 7
	}
	defer delete(subcommands, "test-sub")
	var out bytes.Buffer
	code := realMain(context.Background(), []string{"test-sub", "a", "--b"}, strings.NewReader(""), &out, io.Discard)
	assert.Equal(t, 7, code)
	assert.Equal(t, []string{"a", "--b"}, got)
	assert.Equal(t, "sub ran\n", out.String())
}

// The real main with an empty stdin writes only the banner.
func TestRealMainEmptyInput(t *testing.T) {
	var out bytes.Buffer
	assert.Equal(t, exitOK, realMain(context.Background(), nil, strings.NewReader(""), &out, io.Discard))
	assert.Equal(t, protocol.Banner, out.String())
	out.Reset()
	assert.Equal(t, exitOK, realMain(context.Background(), []string{"--no-banner"}, strings.NewReader("# only a comment\n"), &out, io.Discard))
	assert.Empty(t, out.String())
}

func TestPuppetHandler(t *testing.T) {
	tests := []struct {
		name  string
		level slog.Level
		msg   string
		attrs []any
		want  string
	}{
		{"notice", applier.LevelNotice, "hi there", nil, "Notice: hi there\n"},
		{"notice with property", applier.LevelNotice, "created", []any{"resource", "File[/x]", "property", "ensure"}, "Notice: /File[/x]/ensure: created\n"},
		{"error applying", slog.LevelError, "could not write", []any{"resource", "File[/x]"}, "Error: (Applying File[/x]) could not write\n"},
		{"warning", slog.LevelWarn, "careful", []any{"path", "/y"}, "Warning: careful (path=/y)\n"},
		{"debug", slog.LevelDebug, "details", nil, "Debug: details\n"},
		{"info", slog.LevelInfo, "fyi", nil, "Info: fyi\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			slog.New(puppetlog.New(&b, slog.LevelDebug)).Log(context.Background(), tt.level, tt.msg, tt.attrs...)
			assert.Equal(t, tt.want, b.String())
		})
	}
	var b bytes.Buffer
	l := slog.New(puppetlog.New(&b, slog.LevelWarn))
	l.Info("hidden")
	l.Log(context.Background(), applier.LevelNotice, "hidden too")
	l.With("resource", "Exec[x]").Error("failed")
	assert.Equal(t, "Error: (Applying Exec[x]) failed\n", b.String())
}
