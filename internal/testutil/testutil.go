// Package testutil holds the few helpers that tests in several packages
// share. It is imported only from _test.go files.
package testutil

import (
	"bytes"
	"flag"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	json "github.com/goccy/go-json"
)

// SyncBuffer is a bytes.Buffer safe for concurrent writers, such as a log
// destination written from a process' goroutines while a test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Take returns what was written since the last Take and forgets it: a
// test reads the log of each step apart.
func (s *SyncBuffer) Take() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.b.String()
	s.b.Reset()
	return out
}

// Answer is one decoded answer line, as tests read the receiver's
// stdout: pointers tell a null or absent member from an empty one.
type Answer struct {
	Resource  *string           `json:"resource"`
	Failed    bool              `json:"failed"`
	Changed   bool              `json:"changed"`
	Noop      bool              `json:"noop"`
	Error     bool              `json:"error"`
	Exception *string           `json:"exception"`
	ID        json.RawMessage   `json:"id"`
	Events    []json.RawMessage `json:"events"`
	// Ready is set on the ready banner line only.
	Ready *bool `json:"ready"`
}

// DecodeAnswers decodes every non-empty line of out, failing the test on
// a line that is not a JSON object; the ready banner line, if any, is
// returned apart.
func DecodeAnswers(t testing.TB, out string) (banner string, as []Answer) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if l == "" {
			continue
		}
		var a Answer
		if err := json.Unmarshal([]byte(l), &a); err != nil {
			t.Fatalf("answer is not JSON: %q: %v", l, err)
		}
		if a.Ready != nil {
			banner = l
			continue
		}
		as = append(as, a)
	}
	return banner, as
}

// FuzzWatchdog crashes the fuzz worker when one input takes more than two
// seconds, so that the fuzzer records it (a hang is otherwise never
// reported): defer FuzzWatchdog(input)() at the top of a fuzz function.
// It is armed only while fuzzing: seed runs under -race on a loaded
// machine may be slow without anything being wrong.
func FuzzWatchdog(in []byte) (stop func()) {
	if f := flag.Lookup("test.fuzz"); f == nil || f.Value.String() == "" {
		return func() {}
	}
	t := time.AfterFunc(2*time.Second, func() { panic(fmt.Sprintf("input took more than 2s: %q", in)) })
	return func() { t.Stop() }
}

// EqualValues compares decoded params values (nil, string, int64,
// float64, bool, []any, map[string]any), as reflect.DeepEqual does but
// with NaN equal to NaN.
func EqualValues(a, b any) bool {
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !EqualValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, e := range x {
			f, ok := y[k]
			if !ok || !EqualValues(e, f) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}
