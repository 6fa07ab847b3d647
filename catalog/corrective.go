package catalog

import (
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"reflect"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/applier"
	"github.com/pippet/pippet/applier/sysfile"
	"github.com/pippet/pippet/protocol"
	"github.com/pippet/pippet/report"
)

// The transaction store: what each managed property was left at by the
// run before, so that a change can be told corrective (it set back a
// value that had drifted from what the run before left) or intentional
// (the catalog asked for something new), as Puppet's agent tells it with
// its transactionstore.yaml.
//
// Per resource and property it keeps the desired value the catalog gave
// (should) and, when the system was not left at it, the value it was left
// at (system: the value found by a change that failed or was only
// reported, noop). A property in sync, or changed, keeps only should. A
// later change of the property is corrective when the value found differs
// from system, or, without system, when the catalog still asks for should
// (the system drifted from it).

type storedProp struct {
	Should any `json:"should,omitempty"`
	System any `json:"system,omitempty"`
	// HasSystem: System was said by an event (it may be null).
	HasSystem bool `json:"has_system,omitempty"`
}

type transactionStore struct {
	path string
	old  map[string]map[string]storedProp
	new  map[string]map[string]storedProp
}

func loadStore(path string, log *slog.Logger) *transactionStore {
	st := &transactionStore{path: path, new: map[string]map[string]storedProp{}}
	if path == "" {
		return st
	}
	b, err := sysfile.ReadRegular(path, 0)
	if err != nil {
		if !os.IsNotExist(err) {
			log.Warn("Transaction store " + path + " could not be read: " + err.Error() + "; no change is told corrective")
		}
		return st
	}
	var doc struct {
		Resources map[string]map[string]storedProp `json:"resources"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		log.Error("Transaction store file " + path + " is corrupt (" + err.Error() + "); replacing it")
		return st
	}
	st.old = doc.Resources
	return st
}

// notIdempotent are the properties Puppet never calls a change of
// corrective: a notify's message and an exec's command run.
func notIdempotent(typ, prop string) bool {
	t := strings.ToLower(typ)
	return (t == "notify" && prop == "message") || (t == "exec" && prop == "returns")
}

// record marks s's corrective events and keeps what the run left.
func (st *transactionStore) record(s *report.Status, v *vertex) {
	if st.path == "" {
		return
	}
	ref := s.Resource
	if s.Skipped {
		// Nothing was looked at: what the run before knew stands.
		if o, ok := st.old[ref]; ok {
			st.new[ref] = o
		}
		return
	}
	old := st.old[ref]
	keep := map[string]storedProp{}
	secret := map[string]bool{}
	for _, p := range v.res.Secrets {
		secret[p] = true // never written to the store, never corrective
	}
	if v.typ != nil {
		for _, a := range v.typ.Attrs {
			if a.Behaviour != applier.Property {
				continue
			}
			if val, ok := v.res.Params[a.Name]; ok && !secret[a.Name] {
				keep[a.Name] = storedProp{Should: val}
			}
		}
	}
	sum, sourced := sourcedContent(s, v)
	if sourced {
		keep["content"] = storedProp{Should: sum}
	}
	for i := range s.Events {
		e := &s.Events[i]
		if e.Property == "" || e.Status == report.StatusAudit || secret[e.Property] {
			continue
		}
		should, managed := v.res.Params[e.Property]
		if !managed && sourced && e.Property == "content" && e.Status == protocol.StatusSuccess {
			// What the source gave, as the file now holds it.
			should, managed = sum, true
		}
		if !managed && e.Status == protocol.StatusSuccess && e.Desired != nil {
			// A property the catalog leaves to its default (a file's
			// ensure given content, a host's ensure): what the run
			// wanted of it, as Puppet's store keeps its should.
			should, managed = e.Desired, true
		}
		if o, ok := old[e.Property]; ok && !e.Redacted && !notIdempotent(s.Type, e.Property) {
			switch {
			case o.HasSystem:
				e.CorrectiveChange = !sameValue(o.System, e.Previous)
			case managed:
				e.CorrectiveChange = sameValue(o.Should, should)
			}
		}
		if e.CorrectiveChange {
			s.CorrectiveChange = true
		}
		// A change made left the system at should (kept as a property in
		// sync is: the desired value's own form, which the next run
		// compares with the catalog's, not with a value found, whose form
		// may differ: content and its checksum).
		p := storedProp{Should: should}
		switch {
		case e.Status == protocol.StatusSuccess:
		case old[e.Property].HasSystem:
			p.System, p.HasSystem = old[e.Property].System, true
		default:
			p.System, p.HasSystem = e.Previous, true
		}
		keep[e.Property] = p
	}
	// A property left to its default and in sync this run (no event):
	// what the run before wanted of it stands.
	for name, p := range old {
		if _, ok := keep[name]; ok || secret[name] {
			continue
		}
		if _, given := v.res.Params[name]; !given {
			keep[name] = p
		}
	}
	if len(keep) > 0 {
		st.new[ref] = keep
	}
}

// sourcedContent is the content a file given by its source (no content
// attribute) was left with, as its checksum ({sha256}...): Puppet's file
// takes the source's checksum as its content's desired value, so its
// store keeps the content of such a file too and setting it back is
// corrective. ok is false for other resources, a failed one, a file not
// left a regular file, or a checksum other than sha256.
func sourcedContent(s *report.Status, v *vertex) (string, bool) {
	p := v.res.Params
	if !strings.EqualFold(s.Type, "file") || s.Failed || p["source"] == nil || p["content"] != nil {
		return "", false
	}
	if c, ok := p["checksum"].(string); ok && c != "" && c != "sha256" {
		return "", false
	}
	path, _ := p["path"].(string)
	if path == "" {
		path = v.res.Title
	}
	b, err := sysfile.ReadRegular(path, 0)
	if err != nil {
		return "", false
	}
	return fmt.Sprintf("{sha256}%x", sha256.Sum256(b)), true
}

// sameValue compares two values as JSON holds them (a number is a
// number whatever its Go type; a list of one is its element).
func sameValue(a, b any) bool {
	norm := func(v any) any {
		raw, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		var out any
		if json.Unmarshal(raw, &out) != nil {
			return string(raw)
		}
		if l, ok := out.([]any); ok && len(l) == 1 {
			return l[0]
		}
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// save writes the store through a temporary file renamed into place.
func (st *transactionStore) save(log *slog.Logger) {
	if st.path == "" {
		return
	}
	saveState(st.path, "transaction store", map[string]any{"resources": st.new}, log)
}
