package applier

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/pippet/pippet/protocol"
)

// Describe writes t's documentation the way `puppet describe TYPE` does,
// from the declaration: the type's doc, then every attribute (sorted, the
// implicit `provider` included) with its behaviour, value kind, default,
// valid values and doc, then the providers with their confinement and
// defaults.
func Describe(w io.Writer, t *Type) error {
	ix, err := t.index()
	if err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString("\n" + t.Name + "\n" + strings.Repeat("=", len(t.Name)) + "\n")
	wrap(&b, t.Doc, "")
	b.WriteString("\n\nParameters\n----------\n")
	attrs := slices.Clone(t.Attrs)
	if ix.providerAttr != nil {
		attrs = append(attrs, ix.providerAttr)
	}
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Name < attrs[j].Name })
	for _, a := range attrs {
		b.WriteString("\n- **" + a.Name + "**")
		switch a.Behaviour {
		case Namevar:
			b.WriteString(" (*namevar*)")
		case Property:
			b.WriteString(" (*property*)")
		case ReadOnly:
			b.WriteString(" (*read-only*)")
		}
		b.WriteString("\n")
		wrap(&b, a.Doc, "    ")
		for _, line := range attrFacts(a, ix) {
			wrap(&b, line, "    ")
		}
	}
	if len(t.Providers) > 0 && t.Providers[0].Name != "" {
		b.WriteString("\nProviders\n---------\n")
		names := make([]string, len(t.Providers))
		for i, p := range t.Providers {
			names[i] = p.Name
		}
		b.WriteString("    " + strings.Join(names, ", ") + "\n")
		for _, p := range t.Providers {
			b.WriteString("\n- **" + p.Name + "**\n")
			wrap(&b, p.Doc, "    ")
			if c := confineText(&p.Confine); c != "" {
				wrap(&b, "Confined to: "+c+".", "    ")
			}
			if d := factsText(p.Defaults); d != "" {
				wrap(&b, "Default for "+d+".", "    ")
			}
		}
	}
	_, err = io.WriteString(w, b.String())
	return err
}

// DescribeMeta documents the metaparameters every type accepts, like
// `puppet describe --meta`.
func DescribeMeta(w io.Writer) error {
	var b strings.Builder
	b.WriteString("\nMeta Parameters\n---------------\n")
	for _, name := range MetaparamNames() {
		b.WriteString("\n- **" + name + "**\n")
		wrap(&b, metaparamDocs[name], "    ")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// DescribeList writes one line per registered type, like `puppet describe --list`.
func DescribeList(w io.Writer, reg *Registry) error {
	var b strings.Builder
	b.WriteString("These are the types known to pippet:\n")
	for _, t := range reg.Types() {
		first, _, _ := strings.Cut(t.Doc, ". ")
		first = strings.TrimSuffix(first, ".")
		if len(first) > 45 {
			first = first[:45] + " ..."
		}
		fmt.Fprintf(&b, "%-15s - %s\n", t.Name, first)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

var kindNames = map[Kind]string{
	KindString: "string", KindInteger: "integer", KindBoolean: "boolean",
	KindEnum: "enum", KindPath: "absolute path", KindAny: "any",
}

// attrFacts are the lines describing a's declaration: kind, required,
// default, valid values, patterns.
func attrFacts(a *Attr, ix *typeIndex) []string {
	var parts []string
	k := kindNames[a.Kind]
	if a.Array {
		k = "array of " + k + " (a single value is a one-element array)"
		if a.Unordered {
			k += ", order ignored"
		}
	}
	line := "Kind: " + k + "."
	if a.Required {
		line += " Required."
	}
	if a.Range != nil {
		line += " Range: " + a.Range.String() + "."
	}
	if v, ok := ix.defaults[a.Name]; ok {
		line += " Default: `" + FormatValue(v) + "`."
	} else if a.DefaultFunc != nil {
		line += " Has a computed default."
	}
	parts = append(parts, line)
	if len(a.Values) > 0 {
		aliasesOf := map[string][]string{}
		for _, from := range slices.Sorted(maps.Keys(a.Aliases)) {
			to := a.Aliases[from]
			aliasesOf[to] = append(aliasesOf[to], "`"+from+"`")
		}
		vals := make([]string, len(a.Values))
		for i, v := range a.Values {
			vals[i] = "`" + v + "`"
			if al := aliasesOf[v]; len(al) > 0 {
				vals[i] += " (also called " + strings.Join(al, ", ") + ")"
			}
		}
		if a.Kind == KindEnum {
			parts = append(parts, "Valid values are "+strings.Join(vals, ", ")+".")
		} else {
			parts = append(parts, "Also accepts "+strings.Join(vals, ", ")+".")
		}
	}
	if len(a.Patterns) > 0 {
		res := make([]string, len(a.Patterns))
		for i, re := range a.Patterns {
			res[i] = "`/" + re.String() + "/`"
		}
		parts = append(parts, "Values can match "+strings.Join(res, ", ")+".")
	}
	return parts
}

func confineText(c *Confine) string {
	var parts []string
	if f := factsText(c.Facts); f != "" {
		parts = append(parts, f)
	}
	for _, f := range c.Features {
		parts = append(parts, "feature "+f)
	}
	for _, cmd := range c.Commands {
		parts = append(parts, "command "+cmd)
	}
	for _, f := range c.Files {
		parts = append(parts, "file "+f)
	}
	if c.Func != nil {
		parts = append(parts, "a run-time check")
	}
	return strings.Join(parts, ", ")
}

func factsText(m map[string][]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, k+" "+strings.Join(m[k], " or "))
	}
	return strings.Join(parts, ", ")
}

// wrap writes text word-wrapped to 76 columns, each line prefixed by indent.
func wrap(b *strings.Builder, text, indent string) {
	if strings.TrimSpace(text) == "" {
		return
	}
	for _, para := range strings.Split(text, "\n") {
		line := indent
		for _, word := range strings.Fields(para) {
			if len(line) > len(indent) && len(line)+1+len(word) > 76 {
				b.WriteString(line + "\n")
				line = indent
			}
			if len(line) > len(indent) {
				line += " "
			}
			line += word
		}
		b.WriteString(line + "\n")
	}
}

var behaviourNames = map[Behaviour]string{
	Parameter: "parameter", Property: "property", Namevar: "namevar", ReadOnly: "read-only",
}

// DescribeJSON is t's declaration as one JSON object, the data `receiver
// describe` prints and the describe verb answers:
//
//	{"name":..., "doc":..., "can_list":bool,
//	 "attributes":[{"name","behaviour","kind","array","unordered","required",
//	                "default","computed_default","values","aliases","patterns",
//	                "features","doc"}, ...],
//	 "providers":[{"name","doc","suitable","missing","default_for","features",
//	               "confine","can_list"}, ...],
//	 "chosen":NAME, "why":REASON}
//
// Attributes are in declaration order, the implicit provider last.
// chosen is the provider apply would use here (null when none is
// suitable) and why says so in words. What only an engine knows is given:
// missing says what a provider lacks here ("" when it is suitable),
// chosen is the provider the engine would choose (nil: none) and
// chosenDefault whether it is chosen as the default for the facts.
func DescribeJSON(t *Type, missing func(*ProviderSpec) string, chosen *ProviderSpec, chosenDefault bool) ([]byte, error) {
	ix, err := t.index()
	if err != nil {
		return nil, err
	}
	b := []byte(`{"name":`)
	b = protocol.AppendString(b, t.Name)
	b = append(b, `,"doc":`...)
	b = protocol.AppendString(b, t.Doc)
	b = append(b, `,"attributes":[`...)
	for i, a := range ix.attrs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"name":`...)
		b = protocol.AppendString(b, a.Name)
		b = append(b, `,"behaviour":`...)
		b = protocol.AppendString(b, behaviourNames[a.Behaviour])
		b = append(b, `,"kind":`...)
		b = protocol.AppendString(b, kindNames[a.Kind])
		b = append(b, `,"array":`...)
		b = strconv.AppendBool(b, a.Array)
		b = append(b, `,"unordered":`...)
		b = strconv.AppendBool(b, a.Unordered)
		b = append(b, `,"required":`...)
		b = strconv.AppendBool(b, a.Required)
		b = append(b, `,"default":`...)
		b = protocol.AppendValue(b, ix.defaults[a.Name])
		b = append(b, `,"computed_default":`...)
		b = strconv.AppendBool(b, a.DefaultFunc != nil)
		b = append(b, `,"values":`...)
		b = protocol.AppendValue(b, nonNil(a.Values))
		b = append(b, `,"aliases":`...)
		al := a.Aliases
		if al == nil {
			al = map[string]string{}
		}
		b = protocol.AppendValue(b, al)
		pats := make([]string, len(a.Patterns))
		for k, re := range a.Patterns {
			pats[k] = re.String()
		}
		b = append(b, `,"patterns":`...)
		b = protocol.AppendValue(b, pats)
		b = append(b, `,"features":`...)
		b = protocol.AppendValue(b, nonNil(a.Features))
		b = append(b, `,"doc":`...)
		b = protocol.AppendString(b, a.Doc)
		b = append(b, '}')
	}
	b = append(b, `],"providers":[`...)
	why := ""
	switch {
	case len(t.Providers) > 0 && t.Providers[0].Name == "":
		why = "the type's one built-in implementation"
	case chosen == nil:
		why = "no provider is suitable here"
	case chosenDefault:
		why = "suitable and the default for " + factsText(chosen.Defaults)
	default:
		why = "the first suitable provider in order of declaration; none is the default here"
	}
	canList := false
	for i, p := range t.Providers {
		if i > 0 {
			b = append(b, ',')
		}
		lacks := missing(p)
		b = append(b, `{"name":`...)
		b = protocol.AppendString(b, p.Name)
		b = append(b, `,"doc":`...)
		b = protocol.AppendString(b, p.Doc)
		b = append(b, `,"suitable":`...)
		b = strconv.AppendBool(b, lacks == "")
		b = append(b, `,"missing":`...)
		b = protocol.AppendString(b, lacks)
		b = append(b, `,"default_for":`...)
		b = protocol.AppendString(b, factsText(p.Defaults))
		b = append(b, `,"features":`...)
		b = protocol.AppendValue(b, nonNil(p.Features))
		b = append(b, `,"confine":`...)
		b = protocol.AppendString(b, confineText(&p.Confine))
		b = append(b, `,"can_list":`...)
		b = strconv.AppendBool(b, p.Instances != nil)
		b = append(b, '}')
		if p == chosen {
			canList = p.Instances != nil
		}
	}
	b = append(b, `],"chosen":`...)
	if chosen == nil {
		b = append(b, "null"...)
	} else {
		b = protocol.AppendString(b, chosen.Name)
	}
	b = append(b, `,"why":`...)
	b = protocol.AppendString(b, why)
	b = append(b, `,"can_list":`...)
	b = strconv.AppendBool(b, canList)
	return append(b, '}'), nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
