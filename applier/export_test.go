package applier

// Rebuild exposes buildResource's recycling to the external tests: it
// builds a request of t into reuse's storage, or returns nil on an error.
func Rebuild(t *Type, reuse *Resource, title string, params map[string]any, noop bool) *Resource {
	r, err := t.buildResource(reuse, title, params, noop, buildApply)
	if err != nil {
		return nil
	}
	return r
}
