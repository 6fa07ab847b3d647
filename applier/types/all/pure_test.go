package all_test

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/pippet/pippet/applier"
)

// A line sent again is validated once: the engine's session keeps the
// resource built from it and copies it for every later copy (applier's
// memo.go). So validation (Munge, Validate, DefaultFunc, the type's
// Validate and RefTitle) must not read the system, or an attribute whose
// validation does must be declared Volatile, which builds every request
// giving it afresh. TestValidationReadsNoSystem holds every registered
// type to that: each attribute is given, alone beside the type's required
// ones, a value from its declaration or a path in a temporary directory,
// and the request is built twice, once with every path it names existing
// (a file) and once with none of them; a build that differs (an error one
// time and not the other, or other values) read the system. It catches a
// rule that looks at the paths a request names (file's local source must
// exist); one that reads a fixed system file (/etc/passwd) it cannot
// change between the builds, and does not catch.
func TestValidationReadsNoSystem(t *testing.T) {
	for _, typ := range applier.Default.Types() {
		t.Run(typ.Name, func(t *testing.T) {
			for _, bad := range systemReads(t, typ) {
				t.Errorf("%s: validation reads the system (%s) without declaring the attribute Volatile", typ.Name, bad)
			}
		})
	}
}

// The check itself finds a Validate that reads the system, and accepts it
// once the attribute is declared Volatile.
func TestValidationReadsNoSystemCatches(t *testing.T) {
	probe := &applier.Attr{Name: "probe", Behaviour: applier.Parameter, Kind: applier.KindString}
	typ := &applier.Type{
		Name: "probe_type",
		Attrs: []*applier.Attr{
			{Name: "name", Behaviour: applier.Namevar, Kind: applier.KindString},
			probe,
		},
		Validate: func(r *applier.Resource) error {
			if p := r.String("probe"); p != "" {
				if _, err := os.Stat(p); err != nil {
					return errors.New("probe must exist")
				}
			}
			return nil
		},
	}
	assert.Equal(t, []string{"probe"}, systemReads(t, typ))
	probe.Volatile = true
	assert.Empty(t, systemReads(t, typ))
}

// systemReads builds requests of typ twice, the paths they name existing
// and not, and lists the attributes (not Volatile) whose builds differ.
func systemReads(t *testing.T, typ *applier.Type) []string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "given")
	title := filepath.Join(dir, "title")
	required := map[string]any{}
	for _, a := range typ.Attrs {
		if a.Required && a.Behaviour != applier.Namevar {
			if vs := candidates(a, path); len(vs) > 0 {
				required[a.Name] = vs[0]
			}
		}
	}
	var bad []string
	for _, a := range typ.Attrs {
		if a.Volatile || a.Behaviour == applier.ReadOnly {
			continue
		}
		for _, v := range candidates(a, path) {
			params := map[string]any{a.Name: v}
			for k, rv := range required {
				if k != a.Name {
					params[k] = rv
				}
			}
			for _, p := range []string{path, title} {
				if err := os.WriteFile(p, []byte("content\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			present := build(typ, title, params)
			for _, p := range []string{path, title} {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
			absent := build(typ, title, params)
			if !reflect.DeepEqual(present, absent) {
				bad = append(bad, a.Name)
				t.Logf("%s: %s=%v: with the paths %v, without %v", typ.Name, a.Name, v, present, absent)
				break
			}
		}
	}
	return bad
}

// candidates are values to give attribute a: its valid values, and a path
// (a string or a list holding one) where the kind takes one.
func candidates(a *applier.Attr, path string) []any {
	var out []any
	for i, v := range a.Values {
		if i < 3 {
			out = append(out, v)
		}
	}
	switch a.Kind {
	case applier.KindString, applier.KindPath, applier.KindAny:
		out = append(out, path, "file://"+path)
	case applier.KindInteger:
		out = append(out, int64(1))
	case applier.KindBoolean:
		out = append(out, true)
	}
	if a.Array {
		n := len(out)
		for _, v := range out[:n] {
			out = append(out, []any{v})
		}
	}
	return out
}

// build is what building a request gives: its error, or its values by
// attribute name.
func build(typ *applier.Type, title string, params map[string]any) any {
	r, err := typ.NewResource(title, params, false)
	if err != nil {
		return "error: " + err.Error()
	}
	vals := map[string]any{"ref": r.Ref()}
	for _, a := range typ.Attrs {
		if v, ok := r.Get(a.Name); ok {
			vals[a.Name] = v
		}
	}
	return vals
}
