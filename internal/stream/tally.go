package stream

import (
	"fmt"
	"time"

	"github.com/pippet/pippet/protocol"
)

// Tally counts the answers for the summary line and --detailed-exitcodes.
// A nil *Tally counts nothing, so the loop pays nothing for it unless one
// of them is wanted.
type Tally struct {
	resources, changed, failed int
	busy                       time.Duration // time spent decoding and applying
}

// Add counts one answer; start is when its line was taken up.
func (t *Tally) Add(res *protocol.Result, start time.Time) {
	if t == nil {
		return
	}
	t.resources++
	if res.Changed {
		t.changed++
	}
	if res.Failed || res.Error {
		t.failed++
	}
	t.busy += time.Since(start)
}

// Summary is the line logged at notice at the end of input, like
// `puppet apply`'s "Applied catalog in 0.05 seconds".
func (t *Tally) Summary() string {
	noun := "resources"
	if t.resources == 1 {
		noun = "resource"
	}
	return fmt.Sprintf("Applied %d %s in %.2f s: %d changed, %d failed", t.resources, noun, t.busy.Seconds(), t.changed, t.failed)
}

// DetailedExitCode is `puppet apply --detailed-exitcodes`'s status: 0
// nothing changed and nothing failed, 2 changes, 4 failures, 6 both.
func (t *Tally) DetailedExitCode() int {
	code := 0
	if t.changed > 0 {
		code |= 2
	}
	if t.failed > 0 {
		code |= 4
	}
	return code
}
