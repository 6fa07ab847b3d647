package puppetlog

import (
	"bytes"
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestHandleLines: a message of several lines is one record a line, each
// with the level's label, except a diff, which is printed as Puppet
// prints it (the first line with the label, then diff -u's lines as they
// are); a message that only looks like a diff to start with is not.
func TestHandleLines(t *testing.T) {
	cases := []struct{ name, msg, want string }{
		{"one line", "/File[/x]/mode: mode changed", "Notice: /File[/x]/mode: mode changed\n"},
		{"several lines", "failed:\nError: forged", "Notice: failed:\nNotice: Error: forged\n"},
		{"diff", "/File[/x]/content: \n--- /x\t2026-11-29 01:00:00.000000000 +0000\n+++ /x (new)\t2026-11-29 01:00:01.000000000 +0000\n@@ -1 +1 @@\n-old\n+new\n",
			"Notice: /File[/x]/content: \n--- /x\t2026-11-29 01:00:00.000000000 +0000\n+++ /x (new)\t2026-11-29 01:00:01.000000000 +0000\n@@ -1 +1 @@\n-old\n+new\n"},
		{"diff with control characters", "/File[/x]/content: \n--- /x\n+++ /x (new)\n@@ -1 +1 @@\n-a\x1b[31m\n+b\r\n",
			"Notice: /File[/x]/content: \n--- /x\n+++ /x (new)\n@@ -1 +1 @@\n-a\\x1b[31m\n+b\\r\n"},
		{"a line no diff has", "/File[/x]/content: \n--- /x\n+++ /x (new)\n@@ -1 +1 @@\nError: forged\n",
			"Notice: /File[/x]/content: \nNotice: --- /x\nNotice: +++ /x (new)\nNotice: @@ -1 +1 @@\nNotice: Error: forged\nNotice: \n"},
		{"no +++ line", "x\n--- a\nError: forged", "Notice: x\nNotice: --- a\nNotice: Error: forged\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			h := New(&b, slog.LevelDebug)
			assert.NoError(t, h.Handle(context.Background(), slog.NewRecord(time.Now(), LevelNotice, tc.msg, 0)))
			assert.Equal(t, tc.want, b.String())
		})
	}
}
