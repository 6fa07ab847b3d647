// Package puppetcase holds cases recorded from real Puppet for the types
// that replace Forge modules' (file_line, ini_setting, concat_file...):
// a file before, the resources applied to it, and what Puppet did (the
// file after, changed or failed, its log). The recorder
// (./record: `go run ./applier/typetest/puppetcase/record FILE...`)
// runs `puppet apply` with the Debian modules over each case file's
// inputs and writes the outcomes back into it; the types' tests replay the
// stored cases against the native types (Replay), so no test needs
// Puppet at run time.
//
// In a case, the placeholder @FILE@ in any parameter stands for the
// case's own file (in a temp directory) and @DIR@ for that directory.
package puppetcase

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"

	json "github.com/goccy/go-json"
)

// Resource is one resource of a case, as a manifest declares it.
type Resource struct {
	Type   string         `json:"type"`
	Title  string         `json:"title"`
	Params map[string]any `json:"params,omitempty"`
}

// Entry is one line of Puppet's log (its JSON log destination).
type Entry struct {
	Level   string `json:"level"`
	Source  string `json:"source"`
	Message string `json:"message"`
}

// Case is one recorded case.
type Case struct {
	// Name identifies the case; its file is named after it.
	Name string `json:"name"`
	// Note says what the case covers.
	Note string `json:"note,omitempty"`
	// Before is the file's content before the run; nil: no file.
	Before *string `json:"before"`
	// Mode is the file's permissions before the run (default 0644).
	Mode string `json:"mode,omitempty"`
	// Extra are other files made in the case's directory before the run
	// (name to content), such as a fragment's source.
	Extra map[string]string `json:"extra,omitempty"`
	// Resources are declared in this order; the first is under test.
	Resources []Resource `json:"resources"`
	// Refresh: a notify resource notifies the first resource, which is
	// applied with a refresh.
	Refresh bool `json:"refresh,omitempty"`
	// Solo: recorded in a run of its own (it fails the whole catalog:
	// a validation error).
	Solo bool `json:"solo,omitempty"`

	// What Puppet did.
	Recorded  bool    `json:"recorded"`
	After     *string `json:"after"`
	ModeAfter string  `json:"mode_after,omitempty"`
	Changed   bool    `json:"changed"`
	Failed    bool    `json:"failed"`
	Log       []Entry `json:"log"`

	// Differs, when set, explains where pippet answers otherwise on
	// purpose; WantError is then pippet's error (a substring), WantAfter
	// the file pippet leaves when it is not Puppet's.
	Differs    string  `json:"differs,omitempty"`
	WantError  string  `json:"want_error,omitempty"`
	WantAfter  *string `json:"want_after,omitempty"`
	WantNoFile bool    `json:"want_no_file,omitempty"`
}

// Load reads a case file.
func Load(path string) ([]*Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var cs []*Case
	if err := json.Unmarshal(b, &cs); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return cs, nil
}

// Save writes a case file, indented.
func Save(path string, cs []*Case) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cs); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// Expand replaces the placeholders in v (strings, lists and maps, deep).
func Expand(v any, file, dir string) any {
	switch x := v.(type) {
	case string:
		return strings.ReplaceAll(strings.ReplaceAll(x, "@FILE@", file), "@DIR@", dir)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Expand(e, file, dir)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Expand(e, file, dir)
		}
		return out
	}
	return v
}

// Ref is the resource's reference as Puppet prints it: Ini_setting[x].
func (r Resource) Ref() string {
	return strings.ToUpper(r.Type[:1]) + r.Type[1:] + "[" + r.Title + "]"
}

// Changes are the case's change notices: "PROPERTY: MESSAGE" for each
// notice about the first resource (or what it generated, such as a
// concat_file's File), in Puppet's order; a refresh's is "refresh:
// Triggered 'refresh' from 1 event".
func (c *Case) Changes() []string {
	var out []string
	ref := c.Resources[0].Ref()
	for _, e := range c.Log {
		if e.Level != "notice" {
			continue
		}
		if strings.HasSuffix(e.Source, "/"+ref) && strings.HasPrefix(e.Message, "Triggered 'refresh'") {
			out = append(out, "refresh: "+e.Message)
			continue
		}
		r := ref
		i := strings.Index(e.Source, "/"+r+"/")
		if i < 0 && c.Resources[0].Type == "concat_file" {
			r = "File[@FILE@]"
			i = strings.Index(e.Source, "/"+r+"/")
		}
		if i < 0 {
			continue
		}
		prop := e.Source[i+len(r)+2:]
		if j := strings.LastIndex(prop, "/"); j >= 0 { // a generated File[...]/content
			prop = prop[j+1:]
		}
		out = append(out, prop+": "+e.Message)
	}
	return out
}

var (
	fileLine   = regexp.MustCompile(` \((file|line): [^)]*\)`)
	errPrefix  = regexp.MustCompile(`^(Could not evaluate: |Failed to generate additional resources using 'eval_generate': |Failed to apply catalog: |Validation of [^ ]+ failed: |Evaluation Error: Error while evaluating a Resource Statement, )`)
	wrapPrefix = regexp.MustCompile(`^[A-Z][a-z_]+\[[^\]]*\]: `)
)

// Errors are the core of Puppet's error messages about the case: the
// text after "Could not evaluate: " or "Validation of X failed: ", without
// the manifest's file and line.
func (c *Case) Errors() []string {
	var out []string
	for _, e := range c.Log {
		if e.Level != "err" || strings.HasPrefix(e.Message, "Facter:") {
			continue
		}
		m := fileLine.ReplaceAllString(e.Message, "")
		for {
			n := errPrefix.ReplaceAllString(m, "")
			n = wrapPrefix.ReplaceAllString(n, "")
			if n == m {
				break
			}
			m = n
		}
		out = append(out, m)
	}
	return out
}
