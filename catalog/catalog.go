// Package catalog applies a compiled Puppet catalog as Puppet's agent
// does: as a graph, each resource through the same engine a request line
// goes through.
//
// # From JSON to a graph
//
// Parse reads the catalog JSON that `puppet apply --catalog` reads and a
// Puppet Server's /puppet/v3/catalog returns. Its parameters become the
// values a request's params give (string, int64, float64, bool, nil,
// []any, map[string]any); Puppet's rich data is unwrapped where it can be
// (Sensitive values are kept, and remembered as secrets never to be
// logged or reported) and refused where it cannot (Deferred).
//
// Build turns the resources into Puppet's relationship graph. Classes,
// stages, nodes and instances of defined types are containers, not work:
// each becomes two vertices, its admissible and its completed sentinel
// (Puppet's whits), so that an edge to or from a container costs one edge
// whatever it holds. Containment edges, the before/require/notify/subscribe
// metaparameters (to and from containers too) and the autorequires each
// native type declares as data (applier.Type.Auto) are its edges; a
// notify/subscribe edge, and every containment edge, carries refresh
// events. A cycle refuses the catalog and is named. The walk order is
// topological with ties broken by catalog order (Puppet's ordering =
// manifest).
//
// # The walk
//
// Apply visits the vertices in that order. A resource is skipped when a
// resource it depends on failed (Puppet's "Skipping because of failed
// dependencies"), when it does not match --tags/--skip_tags, or when its
// schedule does not allow it now; otherwise it becomes a protocol.Request
// applied through the Applier (the engine, or the engine with its Puppet
// fallback), with applier.WithRun carrying the whole run so that purge,
// recurse and concat see their siblings. The events a resource makes
// travel along refresh edges: a sentinel that hears any passes one
// "restarted" event on, and a resource of a type that refreshes (exec,
// service) is applied with Refresh set, once, after its own sync, its
// event naming how many events it heard.
//
// # Generated resources
//
// Puppet's types generate resources: a concat_file its File (generate,
// before the walk), a recursive file a child per entry and a tidy a File
// per path to remove (eval_generate and generate). What is generated
// before the walk is part of the run the resources see (the run's
// Managed), so a purge leaves it alone whatever order the walk takes.
// What a provider generates while it is applied it reports to the walk
// (applier.WithGenerated); the walk (walk.go: newWalk, visit, skipped,
// evaluate, record, outgoing, finish) makes each a status of its own
// beside the generating resource's, with its events, containment path
// and tags, and sends its changes along the generating resource's
// refresh edges.
//
// # Reports
//
// The Report holds Puppet's per-resource statuses and the log of the run
// (lines prefixed with Puppet's containment path, through the Log
// handler), and writes Puppet's transaction report YAML and its
// last_run_summary.
package catalog

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"strings"

	json "github.com/goccy/go-json"

	"github.com/pippet/pippet/protocol"
)

// Catalog is a compiled catalog.
type Catalog struct {
	// Name is the node's certname.
	Name string
	// Version is the catalog's configuration version, as given.
	Version string
	// Environment is the environment it was compiled in.
	Environment string
	// UUID is the catalog_uuid.
	UUID string
	// Resources in catalog order: containers and resources alike.
	Resources []*Resource
	// Edges are the containment edges, container to contained.
	Edges []Edge

	// What a Puppet Server's static catalog adds (static.go): CodeID is
	// the code_id ("" when the server has none), Format the
	// catalog_format (0 when not given), Metadata the file metadata the
	// server inlined by File title, and RecursiveMetadata the listings
	// of recursive File resources by title, then source; both as the
	// JSON the server sent.
	CodeID            string
	Format            int
	Metadata          map[string]json.RawMessage
	RecursiveMetadata map[string]map[string]json.RawMessage
}

// Resource is one resource of a catalog.
type Resource struct {
	// Type as the catalog spells it ("File", "Class", "Concat::Fragment").
	Type string
	// Title as given; a class's title is its capitalised name.
	Title string
	// Tags as the compiler set them (type, title words, enclosing classes).
	Tags []string
	// File and Line locate the declaration in the manifests.
	File string
	Line int
	// Exported: the resource was exported (@@) and collected; it is
	// applied as any other, as Puppet's agent applies it.
	Exported bool
	// Kind is the compiler's: compilable_type, defined_type, class, unknown.
	Kind string
	// Params are the resource's parameters as a request gives them,
	// metaparameters included.
	Params map[string]any
	// Secrets lists the parameters whose value was Sensitive.
	Secrets []string
	// deferred names a parameter whose value was Deferred ("" when none).
	deferred string

	// index is the position in the catalog (the walk's tie breaker).
	index int
}

// Ref is the resource's reference as Puppet writes it: Type[title].
func (r *Resource) Ref() string { return r.Type + "[" + r.Title + "]" }

// Edge is a containment edge: Source contains Target (references).
type Edge struct {
	Source, Target string
}

// IsContainer reports whether the resource is a container rather than
// work: a stage, a class, a node, or an instance of a defined type.
func (r *Resource) IsContainer() bool {
	switch strings.ToLower(r.Type) {
	case "stage", "class", "node", "component", "whit":
		return true
	}
	return r.Kind == "defined_type" || r.Kind == "class"
}

// wire is the JSON shape.
type wire struct {
	Name        string `json:"name"`
	Version     any    `json:"version"`
	Environment string `json:"environment"`
	UUID        string `json:"catalog_uuid"`
	Resources   []struct {
		Type       string         `json:"type"`
		Title      any            `json:"title"`
		Tags       []string       `json:"tags"`
		File       string         `json:"file"`
		Line       int            `json:"line"`
		Exported   bool           `json:"exported"`
		Kind       string         `json:"kind"`
		Parameters map[string]any `json:"parameters"`
	} `json:"resources"`
	Edges             []Edge                                `json:"edges"`
	CodeID            *string                               `json:"code_id"`
	Format            int                                   `json:"catalog_format"`
	Metadata          map[string]json.RawMessage            `json:"metadata"`
	RecursiveMetadata map[string]map[string]json.RawMessage `json:"recursive_metadata"`
}

// MaxSize bounds the catalog Parse reads.
const MaxSize = 256 << 20

// Parse reads a catalog in Puppet's JSON form.
func Parse(r io.Reader) (*Catalog, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("reading the catalog: %w", err)
	}
	if len(data) > MaxSize {
		return nil, fmt.Errorf("the catalog is over %d bytes", MaxSize)
	}
	var w wire
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("the catalog is not Puppet's catalog JSON: %w", err)
	}
	if w.Resources == nil {
		return nil, fmt.Errorf("the catalog is not Puppet's catalog JSON: it has no resources")
	}
	c := &Catalog{Name: w.Name, Environment: w.Environment, UUID: w.UUID, Edges: w.Edges,
		Format: w.Format, Metadata: w.Metadata, RecursiveMetadata: w.RecursiveMetadata}
	if w.CodeID != nil {
		c.CodeID = *w.CodeID
	}
	if w.Version != nil {
		c.Version = scalarString(w.Version)
	}
	for i, wr := range w.Resources {
		if wr.Type == "" {
			return nil, fmt.Errorf("resource %d of the catalog has no type", i+1)
		}
		if wr.Title == nil {
			return nil, fmt.Errorf("resource %d of the catalog (%s) has no title", i+1, wr.Type)
		}
		title := scalarString(wr.Title)
		if strings.EqualFold(wr.Type, "class") {
			// Puppet names a class by its capitalised name whatever the
			// JSON says (Class[main] is Class[Main] in every line).
			title = capitalizeSegments(title)
		}
		r := &Resource{Type: wr.Type, Title: title, Tags: wr.Tags, File: wr.File, Line: wr.Line,
			Exported: wr.Exported, Kind: wr.Kind, index: i, Params: make(map[string]any, len(wr.Parameters))}
		for name, raw := range wr.Parameters {
			v, secret, deferred, err := unwrap(protocol.Numbers(raw))
			if err != nil {
				return nil, fmt.Errorf("%s: parameter %s: %w", r.Ref(), name, err)
			}
			if secret {
				r.Secrets = append(r.Secrets, name)
			}
			if deferred && r.deferred == "" {
				r.deferred = name
			}
			r.Params[name] = v
		}
		c.Resources = append(c.Resources, r)
	}
	markSensitive(data, c)
	return c, nil
}

func hasString(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// markSensitive adds to each resource's Secrets the parameters its
// sensitive_parameters names: Puppet's compiler writes a Sensitive value
// into the catalog unwrapped and lists its parameter there (the agent
// wraps it again). Read apart, and only when the catalog has any.
func markSensitive(data []byte, c *Catalog) {
	if !bytes.Contains(data, []byte(`"sensitive_parameters"`)) {
		return
	}
	var w struct {
		Resources []struct {
			Sensitive []string `json:"sensitive_parameters"`
		} `json:"resources"`
	}
	if json.Unmarshal(data, &w) != nil {
		return
	}
	for i, wr := range w.Resources {
		if i >= len(c.Resources) {
			break
		}
		r := c.Resources[i]
		for _, name := range wr.Sensitive {
			if _, given := r.Params[name]; given && !hasString(r.Secrets, name) {
				r.Secrets = append(r.Secrets, name)
			}
		}
	}
}

// scalarString is a title or version as text: a string as it is, a
// number as the JSON wrote it.
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return x.String()
	}
	return fmt.Sprint(v)
}

// unwrap turns Puppet's rich data ({"__ptype": T, "__pvalue": V}) into
// plain values: Sensitive to its value (reported as a secret), Binary to
// its bytes as a string; Deferred is kept and reported; other types are
// refused.
func unwrap(v any) (out any, secret, deferred bool, err error) {
	switch x := v.(type) {
	case []any:
		for i := range x {
			var s, d bool
			x[i], s, d, err = unwrap(x[i])
			if err != nil {
				return nil, false, false, err
			}
			secret, deferred = secret || s, deferred || d
		}
		return x, secret, deferred, nil
	case map[string]any:
		t, ok := x["__ptype"].(string)
		if !ok {
			for k := range x {
				var s, d bool
				x[k], s, d, err = unwrap(x[k])
				if err != nil {
					return nil, false, false, err
				}
				secret, deferred = secret || s, deferred || d
			}
			return x, secret, deferred, nil
		}
		switch t {
		case "Sensitive":
			inner, _, d, err := unwrap(x["__pvalue"])
			return inner, true, d, err
		case "Deferred":
			return x, false, true, nil
		case "Binary":
			// Base64 in the catalog; the bytes are the value.
			s, _ := x["__pvalue"].(string)
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, false, false, fmt.Errorf("Binary value is not base64: %w", err)
			}
			return string(b), false, false, nil
		default:
			if pv, ok := x["__pvalue"]; ok {
				if s, ok := pv.(string); ok {
					// Timestamp, Timespan, SemVer, Regexp and the like are
					// given as their string form.
					return s, false, false, nil
				}
			}
			return nil, false, false, fmt.Errorf("rich data of type %s is not supported", t)
		}
	}
	return v, false, false, nil
}

// capitalizeSegments is Puppet's for a class name: a name that starts
// with an ASCII capital as it is, else each "::" segment with its first
// letter upper and the rest lower case ("ssh::server" is "Ssh::Server").
func capitalizeSegments(name string) string {
	if name == "" || (name[0] >= 'A' && name[0] <= 'Z') {
		return name
	}
	segs := strings.Split(name, "::")
	for i, s := range segs {
		if s != "" {
			segs[i] = strings.ToUpper(s[:1]) + strings.ToLower(s[1:])
		}
	}
	return strings.Join(segs, "::")
}

// refKey is the key a reference is found by: the type in lower case, and
// a class's title in lower case too (Class[Ssh] and Class[ssh] are one).
func refKey(typ, title string) string {
	lt := strings.ToLower(typ)
	if lt == "class" {
		title = strings.ToLower(strings.TrimPrefix(title, "::"))
	}
	return lt + "[" + title + "]"
}

// parseRef splits "Type[title]".
func parseRef(ref string) (typ, title string, ok bool) {
	i := strings.IndexByte(ref, '[')
	if i <= 0 || !strings.HasSuffix(ref, "]") {
		return "", "", false
	}
	return ref[:i], ref[i+1 : len(ref)-1], true
}
