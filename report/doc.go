// Package report is a run's outcome, Puppet's transaction report: the
// model, its three forms, and where it goes. It is the one place a report
// field is declared, encoded and delivered.
//
// The model is Report (report.go): one Status per resource walked, with
// its Events, and the run's LogEntry lines. Who fills it: the catalog walk
// (catalog.Apply) makes the Report, a Status for each resource and its
// events, and sets its status at the end (Finish); `receiver apply` writes
// it as `puppet apply` writes its report. An agent run (agent) then sets
// what only it knows: the host, the environment, the transaction UUID
// it sent with its requests, the static catalog's code id, the lines it
// logged before and after the walk, and Meta (where the catalog came
// from, the phases' times), whose presence makes the report an agent's.
//
// One model is written three ways, as Puppet 7 writes it, so that they
// agree (report_data.go: the data form in Puppet's member order):
//
//   - JSON (MarshalJSON), the body an agent PUTs to
//     /puppet/v3/report/CERTNAME?environment=ENV
//     (Puppet::Transaction::Report#to_data_hash, report_format 12),
//     which the server hands to its report processors;
//   - last_run_report.yaml (WriteYAML), the same document as YAML with
//     Ruby's tag (report_yaml.go emits it);
//   - last_run_summary.yaml (WriteSummary), the metrics by name (what
//     monitoring reads).
//
// Submit sends the JSON and says why the server refused it; WriteFiles
// writes the two files whole or not at all (deliver.go).
//
// Adding a field: declare it on Report, Status or Event (report.go), fill
// it where it is known (catalog/walk.go for what the walk sees, agent's
// run for what the run knows), and give it its place in the data form
// (report_data.go); the tests in this package compare the three forms
// with what Puppet 7 wrote (testdata).
package report
