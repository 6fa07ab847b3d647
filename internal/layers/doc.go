// Package layers holds no code: its tests check the dependency rules
// docs/architecture.md states, with `go list` over the module, so that a
// change breaking one fails `make test` instead of waiting for a review:
//
//   - applier (the type author's API, the engine, the types and their
//     shared pieces) imports nothing of agent: facts and the TLS
//     configuration of puppet:// sources are handed in;
//   - no type package imports another type package: what two types share
//     lives in a shared package (applier/types/internal/...);
//   - one JSON library: encoding/json only in tests (as the reference the
//     hand-written encoder is judged against), goccy/go-json elsewhere.
package layers
