package accounts

// ByGID returns the first group with that gid, or nil.
func (g *Groups) ByGID(gid int64) *Group {
	if g == nil {
		return nil
	}
	return g.byGID[gid]
}
