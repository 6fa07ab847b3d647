package yamlparams

import (
	"fmt"
	"math"
	"os"
	"reflect"
	"sort"
	"strconv"
	"testing"

	json "github.com/goccy/go-json"
)

// encPsych renders a value the way testdata/psych-docs.rb renders Psych's.
func encPsych(v any) any {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		pairs := []any{}
		for _, k := range keys {
			ks := k
			if v, err := resolvePlain(k); err == nil {
				switch y := v.(type) {
				case nil:
					ks = "nil"
				case bool:
					ks = strconv.FormatBool(y)
				case int64:
					ks = strconv.FormatInt(y, 10)
				}
			}
			pairs = append(pairs, []any{ks, encPsych(x[k])})
		}
		sort.Slice(pairs, func(i, j int) bool { return pairs[i].([]any)[0].(string) < pairs[j].([]any)[0].(string) })
		return map[string]any{"map": pairs}
	case []any:
		s := []any{}
		for _, e := range x {
			s = append(s, encPsych(e))
		}
		return map[string]any{"seq": s}
	case int64:
		return map[string]any{"int": strconv.FormatInt(x, 10)}
	case float64:
		switch {
		case math.IsNaN(x):
			return map[string]any{"float": "nan"}
		case math.IsInf(x, 1):
			return map[string]any{"float": "inf"}
		case math.IsInf(x, -1):
			return map[string]any{"float": "-inf"}
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if x == math.Trunc(x) && math.Abs(x) < 1e16 {
			s = strconv.FormatFloat(x, 'f', 1, 64)
		}
		return map[string]any{"float": s}
	case string:
		return map[string]any{"str": x}
	case bool:
		return map[string]any{"bool": strconv.FormatBool(x)}
	case nil:
		return map[string]any{"nil": ""}
	}
	return map[string]any{"other": fmt.Sprintf("%T", v)}
}

// TestPsychDocuments reads 1,500 random documents (flow and block
// mappings, nested lists and mappings, literal blocks, merge keys, tags,
// anchors, YAML 1.1 scalars) and compares them with what Ruby's Psych made
// of them (recorded by testdata/psych-docs.rb): the same values, or an
// error where Psych had one. Keys are compared as Psych types them (a key
// written "yes" is true there; here it keeps its text, see key()).
func TestPsychDocuments(t *testing.T) {
	raw, err := os.ReadFile("testdata/psych-docs.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][2]json.RawMessage
	json.Unmarshal(raw, &rows)
	bad := 0
	for _, r := range rows {
		var doc string
		var want map[string]any
		json.Unmarshal(r[0], &doc)
		json.Unmarshal(r[1], &want)
		m, err := Parse([]byte(doc))
		if _, isErr := want["error"]; isErr {
			if err == nil {
				bad++
				t.Errorf("%q: psych %v, ours %v", doc, want, m)
			}
			continue
		}
		if err != nil {
			bad++
			t.Errorf("%q: psych %v, ours error %v", doc, want, err)
			continue
		}
		var got map[string]any
		b, _ := json.Marshal(encPsych(m))
		json.Unmarshal(b, &got)
		if !reflect.DeepEqual(got, want) {
			bad++
			t.Errorf("%q:\n psych %v\n ours  %v", doc, want, got)
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d documents read differently from Psych", bad, len(rows))
	}
}
