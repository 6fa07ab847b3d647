package main

import (
	"fmt"
	"io"
	"time"
)

// progress tells the person waiting what runs, how far along the whole
// bench is and roughly how long is left, one line on stderr per step
// (the table itself goes to stdout as each row ends). The estimate is
// the mean time of the steps done so far times the steps left: rough,
// since scenarios differ, and better with every step.
type progress struct {
	w     io.Writer
	start time.Time
	total int // steps in the whole bench
	done  int
}

func newProgress(w io.Writer, total int) *progress {
	return &progress{w: w, start: time.Now(), total: total}
}

// step announces the next step ("file create, run 2 of 5").
func (p *progress) step(what string) {
	left := "time left unknown yet"
	if p.done > 0 {
		per := time.Since(p.start) / time.Duration(p.done)
		left = "about " + roundDuration(per*time.Duration(p.total-p.done)).String() + " left"
	}
	p.done++
	fmt.Fprintf(p.w, "e2e [%d/%d] %s (%s elapsed, %s)\n", p.done, p.total, what, roundDuration(time.Since(p.start)), left)
}

// finish says how long the whole bench took.
func (p *progress) finish() {
	fmt.Fprintf(p.w, "e2e: done in %s\n", roundDuration(time.Since(p.start)))
}

// roundDuration keeps a duration readable: whole seconds, tenths below 10 s.
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond)
	}
	return d.Round(time.Second)
}
