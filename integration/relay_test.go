package integration

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/internal/testutil"
)

// outOfStepChild is a fallback command that answers each request for
// Thing[TITLE], echoing the request's id, except that the first answer
// of the first child is printed twice: one answer line too many.
const outOfStepChild = `echo "$BANNER"
while IFS= read -r line; do
  t=${line#*\"title\":\"}; t=${t%%\"*}
  case "$line" in *'"id":'*) id=${line##*\"id\":}; id=${id%\}} ;; *) id=null ;; esac
  a=$(printf '{"resource":"Thing[%s]","failed":false,"changed":true,"noop":false,"error":false,"exception":null,"id":%s}' "$t" "$id")
  echo "$a"
  if [ ! -e "$MARK" ]; then : > "$MARK"; echo "$a"; fi
done
`

// TestRelayExtraAnswerIsTheChildsFailure: the receiver's delegation
// relay checks every answer of the fallback against its request, so a
// child printing one answer too many does not shift the later answers:
// the answer out of step is the child's failure, naming the request's own
// resource, and no answer names another request's resource. Without ids
// (a protocol level 0 banner, as Puppet's receiver) the resource tells;
// with ids (level 1, as the bridge) even a duplicate of the same
// resource's answer is caught.
func TestRelayExtraAnswerIsTheChildsFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		banner string
		titles []string
	}{
		{"no ids", `{"ready":true}`, []string{"a", "b", "c"}},
		{"ids", `{"ready":true,"protocol":1}`, []string{"a", "a", "c"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			child := filepath.Join(dir, "child")
			require.NoError(t, os.WriteFile(child, []byte("#!/bin/sh\n"+outOfStepChild), 0o755))
			t.Setenv("BANNER", tc.banner)
			t.Setenv("MARK", filepath.Join(dir, "mark"))
			var in strings.Builder
			for _, title := range tc.titles {
				fmt.Fprintf(&in, `{"type":"thing","title":%q,"params":{}}`+"\n", title)
			}
			out, errOut, code := run(t, dir, strings.NewReader(in.String()), "--fallback", child, "--no-banner")
			assert.Equal(t, 0, code, errOut)
			_, as := testutil.DecodeAnswers(t, out)
			require.Len(t, as, len(tc.titles), out)
			for i, a := range as {
				assert.Equal(t, "Thing["+tc.titles[i]+"]", *a.Resource, "answer %d names its own request", i)
			}
			assert.False(t, as[0].Failed, out)
			assert.True(t, as[1].Failed, "the answer out of step is the child's failure: %s", out)
			if assert.NotNil(t, as[1].Exception) {
				assert.Contains(t, *as[1].Exception, "out of step")
			}
		})
	}
}

// TestRelayEndlessLineIsBounded: a fallback child writing a line that
// never ends is refused at the relay's limit on an answer line (128 MiB)
// with about that much held: the receiver's peak RSS stays under the
// limit plus 64 MiB (it was 450 MB when the line grew by append).
func TestRelayEndlessLineIsBounded(t *testing.T) {
	dir := t.TempDir()
	child := filepath.Join(dir, "child")
	require.NoError(t, os.WriteFile(child, []byte(`#!/bin/sh
echo '{"ready":true}'
read -r line
head -c 300000000 /dev/zero | tr '\0' x
`), 0o755))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, receiverBin, "--state-dir", t.TempDir(), "--no-banner", "--fallback", child)
	cmd.Stdin = strings.NewReader(`{"type":"thing","title":"a","params":{}}` + "\n")
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	require.NoError(t, cmd.Run(), errOut.String())
	assert.Contains(t, out.String(), "line too long (more than 134217728 bytes)")
	peak := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB
	t.Logf("receiver peak RSS: %d MiB", peak>>20)
	assert.Less(t, peak, int64(128+64)<<20, "peak RSS %d MiB", peak>>20)
}
