package docs_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/goccy/go-json"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/pippet/pippet/applier"
	_ "github.com/pippet/pippet/applier/types/all"
)

var update = flag.Bool("update", false, "rewrite the generated attribute tables of docs/types/*.md from the code")

// The markers around a type page's generated reference.
const (
	beginRef = "<!-- reference: generated from the type's declaration by `go test ./docs -update`; edit the code, not this -->"
	endRef   = "<!-- end of reference -->"
)

// documented are the types whose pages this project's docs engineer
// keeps: each must carry the generated reference. A page another type's
// author writes is checked when it carries the markers.
var documented = []string{
	"file", "host", "mount", "user", "group", "sshkey", "ssh_authorized_key",
	"cron", "service", "tidy", "package", "exec", "notify",
}

// declaration is what `receiver describe --json` prints of a type, less
// what depends on the machine (which provider is suitable here).
type declaration struct {
	Name       string `json:"name"`
	Doc        string `json:"doc"`
	CanList    bool   `json:"can_list"`
	Attributes []struct {
		Name            string            `json:"name"`
		Behaviour       string            `json:"behaviour"`
		Kind            string            `json:"kind"`
		Array           bool              `json:"array"`
		Unordered       bool              `json:"unordered"`
		Required        bool              `json:"required"`
		Default         any               `json:"default"`
		ComputedDefault bool              `json:"computed_default"`
		Values          []string          `json:"values"`
		Aliases         map[string]string `json:"aliases"`
		Patterns        []string          `json:"patterns"`
		Features        []string          `json:"features"`
		Doc             string            `json:"doc"`
	} `json:"attributes"`
	Providers []struct {
		Name       string   `json:"name"`
		Doc        string   `json:"doc"`
		DefaultFor string   `json:"default_for"`
		Features   []string `json:"features"`
		Confine    string   `json:"confine"`
		CanList    bool     `json:"can_list"`
	} `json:"providers"`
}

// cell makes text fit in one cell of a Markdown table.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(strings.TrimSpace(s), "\n", "<br>")
}

func code(vals []string) string {
	out := make([]string, len(vals))
	for i, v := range vals {
		out[i] = "`" + v + "`"
	}
	return strings.Join(out, ", ")
}

// reference renders a type's attribute and provider tables from its
// declaration.
func reference(t *testing.T, typ *applier.Type) string {
	t.Helper()
	// What `receiver describe --json` prints: the describe verb's data.
	raw, err := exec.Command(receiverBin, "describe", "--json", "--fallback", "none", typ.Name).Output()
	require.NoError(t, err, "receiver describe --json %s", typ.Name)
	var d declaration
	require.NoError(t, json.Unmarshal(raw, &d))
	ranges := map[string]string{}
	for _, a := range typ.Attrs {
		if a.Range != nil {
			ranges[a.Name] = a.Range.String()
		}
	}

	var b strings.Builder
	fmt.Fprintf(&b, "## Attributes\n\n%s\n\n", cell(d.Doc))
	b.WriteString("| attribute | kind | accepts | default | description |\n|---|---|---|---|---|\n")
	for _, a := range d.Attributes {
		kind := a.Behaviour
		var accepts []string
		k := a.Kind
		if a.Array {
			k = "list of " + k
			if a.Unordered {
				k += ", order ignored"
			}
		}
		if a.Kind != "enum" {
			accepts = append(accepts, k)
		}
		if len(a.Values) > 0 {
			aliasesOf := map[string][]string{}
			for _, from := range sortedKeys(a.Aliases) {
				aliasesOf[a.Aliases[from]] = append(aliasesOf[a.Aliases[from]], from)
			}
			vals := make([]string, len(a.Values))
			for i, v := range a.Values {
				vals[i] = "`" + v + "`"
				if al := aliasesOf[v]; len(al) > 0 {
					vals[i] += " (or " + code(al) + ")"
				}
			}
			accepts = append(accepts, strings.Join(vals, ", "))
		}
		if len(a.Patterns) > 0 {
			pats := make([]string, len(a.Patterns))
			for i, p := range a.Patterns {
				pats[i] = "`/" + p + "/`"
			}
			accepts = append(accepts, "matching "+strings.Join(pats, ", "))
		}
		if r, ok := ranges[a.Name]; ok {
			accepts = append(accepts, r)
		}
		if a.Required {
			accepts = append(accepts, "**required**")
		}
		def := ""
		switch {
		case a.Default != nil:
			def = "`" + applier.FormatValue(a.Default) + "`"
		case a.ComputedDefault:
			def = "computed"
		}
		doc := a.Doc
		if len(a.Features) > 0 {
			doc += " Needs the provider feature " + code(a.Features) + "."
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", a.Name, kind, cell(strings.Join(accepts, "; ")), def, cell(doc))
	}
	if len(d.Providers) > 0 && d.Providers[0].Name != "" {
		b.WriteString("\n## Providers\n\n| provider | default for | confined to | features | lists instances | description |\n|---|---|---|---|---|---|\n")
		for _, p := range d.Providers {
			list := "no"
			if p.CanList {
				list = "yes"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s |\n", p.Name, cell(p.DefaultFor), cell(p.Confine), code(p.Features), list, cell(p.Doc))
		}
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// Every native type has a page, and the reference in each page is what its
// declaration says now. `go test ./docs -update` rewrites the references.
func TestTypePagesMatchTheCode(t *testing.T) {
	for _, typ := range applier.Default.Types() {
		t.Run(typ.Name, func(t *testing.T) {
			page := filepath.Join(root, "docs", "types", typ.Name+".md")
			b, err := os.ReadFile(page)
			require.NoError(t, err, "every type has a page docs/types/%s.md", typ.Name)
			start := bytes.Index(b, []byte(beginRef))
			end := bytes.Index(b, []byte(endRef))
			if start < 0 && !slices.Contains(documented, typ.Name) {
				t.Skipf("%s has no generated reference", page)
			}
			require.True(t, start >= 0 && end > start, "%s has the markers %q and %q", page, beginRef, endRef)
			want := beginRef + "\n\n" + reference(t, typ) + "\n" + endRef
			got := string(b[start : end+len(endRef)])
			if *update && got != want {
				out := string(b[:start]) + want + string(b[end+len(endRef):])
				require.NoError(t, os.WriteFile(page, []byte(out), 0o644))
				return
			}
			assert.Equal(t, want, got, "%s is not what the code declares: run `go test ./docs -update`", page)
		})
	}
	for _, name := range documented {
		_, ok := applier.Default.Lookup(name)
		assert.True(t, ok, "type %s is registered", name)
	}
}
