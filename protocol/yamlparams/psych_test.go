package yamlparams

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"

	json "github.com/goccy/go-json"
)

// TestPsychScalars compares how 5,000 scalars (YAML 1.1 edge cases and
// random ones) are read, "a: SCALAR", with what Ruby's Psych answered
// (testdata/psych-scalars.rb recorded them): same kind (string, integer,
// float, boolean, null, error) and same value. Integers beyond 64 bits,
// which Psych makes big integers, are an error here.
func TestPsychScalars(t *testing.T) {
	raw, err := os.ReadFile("testdata/psych-scalars.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][2]json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	// yaml.v3 drops the non-specific tag "!" from a quoted scalar, so
	// `! '12'` reads as the string it looks like; Psych resolves it to 12.
	known := map[string]bool{"! '12'": true}
	bad := 0
	for _, r := range rows {
		var s string
		var want []string
		json.Unmarshal(r[0], &s)
		json.Unmarshal(r[1], &want)
		if known[s] {
			continue
		}
		m, err := Parse([]byte("a: " + s + "\n"))
		var got []string
		if err != nil {
			got = []string{"error", err.Error()}
		} else {
			switch x := m["a"].(type) {
			case int64:
				got = []string{"int", strconv.FormatInt(x, 10)}
			case float64:
				switch {
				case math.IsNaN(x):
					got = []string{"float", "nan"}
				case math.IsInf(x, 1):
					got = []string{"float", "inf"}
				case math.IsInf(x, -1):
					got = []string{"float", "-inf"}
				default:
					got = []string{"float", fmt.Sprint(x)}
				}
			case string:
				got = []string{"str", x}
			case bool:
				got = []string{"bool", strconv.FormatBool(x)}
			case nil:
				got = []string{"nil", ""}
			default:
				got = []string{"other", fmt.Sprintf("%T", x)}
			}
		}
		same := got[0] == want[0]
		if same && got[0] == "float" {
			a, _ := strconv.ParseFloat(got[1], 64)
			b, _ := strconv.ParseFloat(want[1], 64)
			same = a == b || got[1] == want[1]
		} else if same && got[0] != "error" {
			same = got[1] == want[1]
		}
		if want[0] == "bigint" && got[0] == "error" {
			same = true
		}
		if !same {
			bad++
			if bad < 20 {
				t.Errorf("%q: psych %v, ours %v", s, want, got)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d scalars read differently from Psych", bad, len(rows))
	}
}
