package facts_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/goccy/go-json"

	"github.com/pippet/pippet/agent/facts"
)

// volatile facts change between Facter's run and ours: compared by type
// and a rough range, not by value.
var volatile = map[string]float64{ // path -> allowed relative difference
	"memory.system.available":       -1, // strings: same unit suffix only
	"memory.system.used":            -1,
	"memory.system.capacity":        -1,
	"memory.system.available_bytes": 0.2,
	"memory.system.used_bytes":      5,
	"memory.swap.available":         -1,
	"memory.swap.used":              -1,
	"memory.swap.capacity":          -1,
	"memory.swap.available_bytes":   0.2,
	"memory.swap.used_bytes":        5,
	"memoryfree":                    -1,
	"memoryfree_mb":                 0.2,
	"swapfree":                      -1,
	"swapfree_mb":                   0.2,
	"system_uptime.seconds":         0.5,
	"system_uptime.hours":           0.5,
	"system_uptime.days":            0.5,
	"system_uptime.uptime":          -1,
	"uptime":                        -1,
	"uptime_seconds":                0.5,
	"uptime_hours":                  0.5,
	"uptime_days":                   0.5,
	"load_averages.1m":              10,
	"load_averages.5m":              10,
	"load_averages.15m":             10,
}

// differences are facts we produce that Facter gives differently (or
// not at all) on purpose; docs/agent.md explains each.
var differences = map[string]string{
	"puppetversion":  "facter --json without -p does not load Puppet",
	"virtual":        "Facter 4.3's virtual fails when /proc/1/environ is unreadable (containers, sandboxes)",
	"is_virtual":     "as virtual",
	"system_uptime":  "Facter 4.3 leaves it out when its uptime resolver fails (as here, /proc/1/environ)",
	"uptime":         "as system_uptime",
	"uptime_seconds": "as system_uptime",
	"uptime_hours":   "as system_uptime",
	"uptime_days":    "as system_uptime",
}

func runFacter(t *testing.T, args ...string) map[string]any {
	t.Helper()
	path, err := exec.LookPath("facter")
	if err != nil {
		t.Skip("facter is not installed: nothing to compare with")
	}
	out, err := exec.Command(path, append([]string{"--json"}, args...)...).Output()
	if err != nil && len(out) == 0 {
		t.Fatalf("facter --json: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		t.Fatalf("facter --json output: %v", err)
	}
	return m
}

// TestAgainstFacter compares every fact we produce with facter's, key by
// key, in both directions inside each structured fact we produce.
func TestAgainstFacter(t *testing.T) {
	want := runFacter(t, "--show-legacy")
	got, errs := facts.Gather(context.Background(), facts.Options{})
	for _, err := range errs {
		t.Logf("gather: %v", err)
	}
	// Through JSON, as the server would see both.
	b, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var ours map[string]any
	if err := json.Unmarshal(b, &ours); err != nil {
		t.Fatal(err)
	}
	var problems []string
	keys := make([]string, 0, len(ours))
	for k := range ours {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if why, ok := differences[k]; ok {
			if w, has := want[k]; has {
				t.Logf("%s: documented difference (%s); facter says %v, we say %v", k, why, w, ours[k])
			}
			continue
		}
		w, ok := want[k]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: we produce it, facter does not", k))
			continue
		}
		compare(k, ours[k], w, &problems)
	}
	for _, p := range problems {
		t.Error(p)
	}
	t.Logf("compared %d top-level facts with facter", len(keys))
}

func compare(path string, got, want any, problems *[]string) {
	if mountFigure.MatchString(path) {
		// A mount point's use moves as the machine writes: its kind only
		// (TestStorageAndRuntimeFactsAsFacter bounds the bytes).
		if reflect.TypeOf(got) != reflect.TypeOf(want) {
			*problems = append(*problems, fmt.Sprintf("%s: type %T, facter %T", path, got, want))
		}
		return
	}
	if tol, ok := volatile[path]; ok {
		if reflect.TypeOf(got) != reflect.TypeOf(want) {
			*problems = append(*problems, fmt.Sprintf("%s: type %T, facter %T", path, got, want))
			return
		}
		switch g := got.(type) {
		case float64:
			w := want.(float64)
			if d := g - w; (d > tol*w+1 || -d > tol*w+1) && w > 10 {
				*problems = append(*problems, fmt.Sprintf("%s: %v, facter %v (beyond %v)", path, g, w, tol))
			}
		case string:
			if suffix(g) != suffix(want.(string)) {
				*problems = append(*problems, fmt.Sprintf("%s: %q, facter %q (not the same unit)", path, g, want))
			}
		}
		return
	}
	gm, gok := got.(map[string]any)
	wm, wok := want.(map[string]any)
	if gok && wok {
		seen := map[string]bool{}
		for k, v := range gm {
			seen[k] = true
			p := path + "." + k
			if why, ok := differences[p]; ok {
				_ = why
				continue
			}
			w, ok := wm[k]
			if !ok {
				*problems = append(*problems, fmt.Sprintf("%s: we produce it, facter does not", p))
				continue
			}
			compare(p, v, w, problems)
		}
		for k := range wm {
			if !seen[k] {
				*problems = append(*problems, fmt.Sprintf("%s.%s: facter has it, we do not", path, k))
			}
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.Marshal(got)
		wj, _ := json.Marshal(want)
		if !bytes.Equal(gj, wj) {
			*problems = append(*problems, fmt.Sprintf("%s: %s, facter %s", path, gj, wj))
		}
	}
}

func suffix(s string) string {
	if i := strings.LastIndexByte(s, ' '); i >= 0 {
		return s[i:]
	}
	if strings.HasSuffix(s, "%") {
		return "%"
	}
	return s
}

// TestLegacyAsFacter: without legacy facts, our top-level names are
// those `facter --json` prints (IsLegacy agrees with Facter's list).
func TestLegacyAsFacter(t *testing.T) {
	want := runFacter(t)
	got, _ := facts.Gather(context.Background(), facts.Options{HideLegacy: true})
	for k := range got {
		if _, ok := want[k]; !ok && differences[k] == "" {
			t.Errorf("%s: we show it without --show-legacy, facter does not", k)
		}
	}
	full, _ := facts.Gather(context.Background(), facts.Options{})
	for k := range runFacter(t, "--show-legacy") {
		_, shown := want[k]
		_, produced := full[k]
		if !shown && produced && !facts.IsLegacy(k) {
			t.Errorf("%s: legacy in facter, not in IsLegacy", k)
		}
	}
}
