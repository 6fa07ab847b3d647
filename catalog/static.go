package catalog

import "github.com/pippet/pippet/applier/source"

// Static is the static catalog's inlined file metadata for the file
// type's sources (source.Options.Static): nil when the catalog inlined
// none. Malformed metadata is an error: such a catalog is not applied.
func (c *Catalog) Static() (*source.Static, error) {
	if len(c.Metadata) == 0 && len(c.RecursiveMetadata) == 0 {
		return nil, nil
	}
	return source.NewStatic(c.CodeID, c.Metadata, c.RecursiveMetadata)
}
