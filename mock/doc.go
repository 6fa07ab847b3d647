// Package mock holds test doubles for pippet's small interfaces:
// protocol.Applier (Applier), applier.Provider (Provider) and runner.Runner
// (Runner, a scripted receiver process). They are for tests of the code
// that sits above an interface (the engine's transaction, the receiver
// loop, a graph engine driving the runner), never a stand-in for checking
// the real thing's behaviour.
package mock
