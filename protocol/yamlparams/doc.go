// Package yamlparams reads the params of a request, a YAML mapping in a
// string, the way Puppet reads them: through Ruby's Psych, with YAML 1.1's
// scalars and safe loading. `{ensure: file, mode: 0644, purge: yes}` is
// the mapping ensure → "file", mode → the integer 420 (octal), purge →
// true; a date, a time, a :symbol or a Ruby object is refused, as safe
// loading refuses it. Parse reads one document; a Reader reads one after
// another, reusing its memory.
//
// # Two paths, one answer
//
// The general path (parse.go) lets yaml.v3 parse the document into nodes
// and converts the nodes itself: yaml.v3 resolves plain scalars by YAML
// 1.2's rules, which are not Psych's, so the conversion to Go values is
// ours (psych.go: resolvePlain follows Psych's ScalarScanner, the tags
// follow its deserializer), and it counts every value it makes, alias
// expansions included. Two shapes make up nearly all real requests: a
// one-line flow mapping of plain and quoted scalars, and a block mapping of
// "key: value" lines where a value may be a literal block (`content: |`).
// The fast path (fast.go) reads those without building a tree, and
// declines anything outside its narrow grammar, or any value the general
// path would refuse, so that the general path decides and reports. The
// fuzz target FuzzParse holds the fast path to the general path's
// answers, and the recorded Psych answers in testdata hold both to Psych.
//
// A Reader given a cache (its Strings) shares the short keys and values
// repeated from document to document: a stream of requests for the same
// type costs only the strings new to each line. The cache learns from the
// input; no type's names are known here.
//
// # Bounded work
//
// Nothing a document holds can cost more than bounded work: nesting is at
// most MaxDepth, values (alias expansions included) at most MaxValues, so
// a billion-laughs document is refused after MaxValues values. yaml.v3
// builds its node tree before anything can be counted, so a document over
// 16 KiB is first scanned once (estimate.go: estimateNodes, an upper bound
// on the nodes from the bytes that can start one) and refused there when
// it would build too many.
//
// # Errors a user can act on
//
// yaml.v3 names at most a line for a syntax error, and for a parser error
// the line where the enclosing collection starts. When it refuses a
// document, a small scanner of our own (locate.go) follows libyaml's
// tokens far enough to find the token at fault, so that an *Error names
// its line and column within the params, and says to quote a plain value
// that YAML reads as structure (one with ": " inside, one starting with
// '@' or '%'). An integer beyond 64 bits names the attribute it was given
// for.
package yamlparams
