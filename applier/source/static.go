package source

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	json "github.com/goccy/go-json"
)

// Static is what a static catalog (a Puppet Server's answer to
// static_catalog=true) says about the sources of its File resources:
// the server found each puppet:///modules/ source in the environment
// when it compiled the catalog and inlined its metadata, so the agent
// asks no file_metadata(s) for them, and reads their content from
// static_file_content at the catalog's code_id (the same version of the
// code the catalog was compiled from) when the server has one.
//
// Metadata is found by the File resource's title, as Puppet's agent
// finds it (catalog.metadata[title], catalog.recursive_metadata[title]).
// A Static is read-only once made and safe for concurrent use.
type Static struct {
	// CodeID is the catalog's code_id; empty when the server has none
	// (no code-id-command): content then comes from file_content.
	CodeID string

	files map[string]*Metadata
	trees map[string]map[string][]Entry
}

// Entry is one entry of an inlined recursive listing.
type Entry struct {
	// Rel is the path below the source ("." for the source itself).
	Rel  string
	Meta *Metadata
}

// NewStatic checks a static catalog's inlined metadata: files maps a
// File title to its metadata (the catalog's "metadata"), trees maps a
// File title, then a source, to the listing of that source (the
// catalog's "recursive_metadata"), each as the JSON the server sent.
// Anything malformed is an error naming the resource: a catalog whose
// metadata cannot be trusted is not applied.
func NewStatic(codeID string, files map[string]json.RawMessage, trees map[string]map[string]json.RawMessage) (*Static, error) {
	s := &Static{CodeID: codeID, files: make(map[string]*Metadata, len(files)), trees: make(map[string]map[string][]Entry, len(trees))}
	for title, raw := range files {
		var pm puppetMeta
		if err := json.Unmarshal(raw, &pm); err != nil {
			return nil, fmt.Errorf("File[%s]: the catalog's inlined metadata: %w", title, err)
		}
		m, err := pm.convert()
		if err != nil {
			return nil, fmt.Errorf("File[%s]: the catalog's inlined metadata: %w", title, err)
		}
		if pm.Source == "" {
			return nil, fmt.Errorf("File[%s]: the catalog's inlined metadata names no source", title)
		}
		m.Source, m.ContentURI = pm.Source, pm.ContentURI
		s.files[title] = m
	}
	for title, bySource := range trees {
		out := make(map[string][]Entry, len(bySource))
		for src, raw := range bySource {
			var list []puppetMeta
			if err := json.Unmarshal(raw, &list); err != nil {
				return nil, fmt.Errorf("File[%s]: the catalog's inlined metadata for %s: %w", title, src, err)
			}
			entries := make([]Entry, 0, len(list))
			root := false
			for i := range list {
				pm := &list[i]
				if pm.RelativePath == nil {
					return nil, fmt.Errorf("File[%s]: the catalog's inlined metadata for %s: entry %d has no relative_path", title, src, i)
				}
				rel := *pm.RelativePath
				if rel == "" {
					rel = "."
				}
				if rel != "." && (strings.HasPrefix(rel, "/") || rel != filepath.Clean(rel) || rel == ".." || strings.HasPrefix(rel, "../")) {
					return nil, fmt.Errorf("File[%s]: the catalog's inlined metadata for %s: relative_path %q leaves the directory", title, src, rel)
				}
				m, err := pm.convert()
				if err != nil {
					return nil, fmt.Errorf("File[%s]: the catalog's inlined metadata for %s: %s: %w", title, src, rel, err)
				}
				m.Source, m.ContentURI = Join(src, rel), pm.ContentURI
				root = root || rel == "."
				entries = append(entries, Entry{Rel: rel, Meta: m})
			}
			if !root {
				return nil, fmt.Errorf("File[%s]: the catalog's inlined metadata for %s has no entry for the directory itself", title, src)
			}
			sort.SliceStable(entries, func(i, j int) bool { return entries[i].Rel == "." && entries[j].Rel != "." })
			out[src] = entries
		}
		s.trees[title] = out
	}
	return s, nil
}

// Len is the number of File resources with inlined metadata (single
// and recursive).
func (s *Static) Len() int {
	if s == nil {
		return 0
	}
	return len(s.files) + len(s.trees)
}

// File returns a copy of the inlined metadata of the File titled title
// (its Source is the source the server chose among the resource's).
func (s *Static) File(title string) (*Metadata, bool) {
	if s == nil {
		return nil, false
	}
	m, ok := s.files[title]
	if !ok {
		return nil, false
	}
	c := *m
	return &c, true
}

// Tree reports whether the File titled title has an inlined recursive
// listing, and returns a copy of the listing of src in it (nil when the
// server found nothing at src: Puppet's agent then takes src as absent
// rather than asking again).
func (s *Static) Tree(title, src string) ([]Entry, bool) {
	if s == nil {
		return nil, false
	}
	t, ok := s.trees[title]
	if !ok {
		return nil, false
	}
	list := t[src]
	out := make([]Entry, len(list))
	for i, e := range list {
		c := *e.Meta
		out[i] = Entry{Rel: e.Rel, Meta: &c}
	}
	return out, true
}
