package inifile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/sysfile"
)

// What ini_setting and ini_subsetting share besides the file model: the
// pieces of their declarations, the redacted value and how the file is
// read. Each type's package declares its own schema from them.

// Redacted is how a value is shown.
const Redacted = "[redacted sensitive information]"

// Value is a setting's value: a string that shows as Redacted in
// messages and answers.
type Value string

// MarshalJSON shows the value redacted.
func (Value) MarshalJSON() ([]byte, error) { return []byte(`"` + Redacted + `"`), nil }

// String shows the value redacted.
func (Value) String() string { return Redacted }

// Booleans are the values of a Puppet::Parameter::Boolean, as its
// error message lists them.
var Booleans = []string{"true", "false", "yes", "no"}

// MungeBoolean makes a Puppet::Parameter::Boolean's value a bool.
func MungeBoolean(v any) (any, error) {
	s, _ := v.(string)
	return s == "true" || s == "yes", nil
}

// AbsolutePath is the modules' check of `path`.
func AbsolutePath(v any) error {
	if s, _ := v.(string); !filepath.IsAbs(s) {
		return fmt.Errorf("File paths must be fully qualified, not '%s'", s)
	}
	return nil
}

// ShowDiff is the modules' show_diff parameter (true, md5 or false).
var ShowDiff = &applier.Attr{
	Name:      "show_diff",
	Behaviour: applier.Parameter,
	Kind:      applier.KindEnum,
	Values:    []string{"true", "md5", "false"},
	Aliases:   map[string]string{"yes": "true", "no": "false"},
	Default:   "true",
	Doc: "Whether to display differences when the setting changes: true, md5 or false. " +
		"Accepted for compatibility: values are always shown redacted, as Puppet shows them " +
		"with its default show_diff setting.",
}

// ReadFile reads path for the ini types: a missing file (or a
// directory) reads as empty, as the module's readlines; a FIFO, device
// or socket is refused ("PATH: not a regular file"), never read, so
// that one placed there cannot stall the run.
func ReadFile(path string) ([]byte, error) {
	b, err := sysfile.ReadRegular(path, 0)
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		return b, nil
	}
	if fi, serr := os.Stat(path); serr == nil && fi.IsDir() {
		return nil, nil
	}
	if errors.Is(err, sysfile.ErrNotRegular) {
		return nil, err
	}
	return nil, fmt.Errorf("reading %s: %w", path, err)
}
