package protocol

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Ref is a resource's reference as Puppet writes it: the type's name as
// RefType spells it, then the title in brackets (File[/etc/motd],
// Apt::Source[main]). With no type it is the title alone. The receiver's
// answers and the runner's messages both spell references through Ref.
func Ref(typ, title string) string {
	if typ == "" {
		return title
	}
	return RefType(typ) + "[" + title + "]"
}

// RefType writes a type's name as Puppet's references do: every segment
// between "::" capitalised as Ruby's String#capitalize does it, first
// letter upper case and the rest lower case (exec → Exec,
// ssh_authorized_key → Ssh_authorized_key, foo::bar → Foo::Bar).
func RefType(typ string) string {
	if typ == "" {
		return typ
	}
	var b strings.Builder
	b.Grow(len(typ))
	first := true
	for i := 0; i < len(typ); {
		if strings.HasPrefix(typ[i:], "::") {
			b.WriteString("::")
			i += 2
			first = true
			continue
		}
		r, n := utf8.DecodeRuneInString(typ[i:])
		if first {
			r = unicode.ToUpper(r)
			first = false
		} else {
			r = unicode.ToLower(r)
		}
		if r == utf8.RuneError && n == 1 {
			b.WriteByte(typ[i]) // not UTF-8: kept as it is
		} else {
			b.WriteRune(r)
		}
		i += n
	}
	return b.String()
}
