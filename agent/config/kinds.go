package config

// kind is a setting's type, as Puppet's settings classes check values.
type kind int

const (
	kString     kind = iota
	kBool            // true or false (any case in puppet.conf)
	kDuration        // digits and a unit y/d/h/m/s; printed in seconds
	kInt             // an integer (Ruby's Integer(): 0x.., 0o.., 0b.., 1_000)
	kPort            // an integer 1-65535
	kTTL             // a duration or "unlimited"
	kArray           // a comma-separated list
	kServerList      // host[:port],...
	kCertRev         // chain (or true), leaf, false
	kEnum            // one of def.values
	kPath            // colon-separated paths, each made absolute
	kFile            // a path, made absolute (~ is the home directory)
	kAutosign        // true, false or a file
	kPriority        // a number or high/normal/low/idle
	kAlias           // another name for def.alias
)

// def is one setting Puppet defines.
type def struct {
	name   string
	kind   kind
	def    string // the default, uninterpolated
	short  byte   // the one-letter command-line flag, if any
	alias  string // kAlias: the setting this name stands for
	values string // kEnum: the allowed values, space-separated
	// dynamic defaults are computed (see load).
	dynamic bool
}

var byName = func() map[string]*def {
	m := make(map[string]*def, len(defs))
	for i := range defs {
		m[defs[i].name] = &defs[i]
	}
	return m
}()
