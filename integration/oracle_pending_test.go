package integration

// The value-kind cases (testdata/oracle-values.json, recorded by
// testdata/record-values.rb) the receiver does not pass yet, by reason.
const (
	pendingChecksumValue = "checksum_value beside content: Puppet ignores it; the receiver refuses a checksum_value that is not the content's"
	pendingEmptylist     = "an empty list: Puppet takes it as no value (the attribute unmanaged, or a default); the receiver refuses it"
	pendingEnsureTrue    = "ensure: true: Puppet makes a link to \"true\" and fails; the receiver makes the link"
	pendingExecAccount   = "exec user or group of another kind: Puppet runs the command as an odd account or fails when running it; the receiver answers otherwise"
	pendingFalseOff      = "false for a string parameter (checksum, ignore, validate_cmd): Puppet takes it as not set; the receiver refuses it"
	pendingNotify        = "notify: false (Puppet sends nothing) and a hash (Puppet prints it) are not yet told apart from their strings"
	pendingOwnerFloat    = "owner or group 1.5: Puppet truncates it to id 1; the receiver looks up the name \"1.5\""
	pendingParamList     = "a list for a parameter that Puppet takes whole (provider, timeout, backup, notify name); the receiver refuses it"
	pendingRange         = "a number out of range (gid -3): Puppet hands it to the tool and fails applying; the receiver refuses it up front with an error answer, on purpose (docs/compatibility.md)"
	pendingReturns       = "returns of another kind: Puppet accepts it and fails when the command runs; the receiver refuses it up front"
)

// oraclePending are the oracle cases the receiver does not pass yet, with
// the reason. A pending case still runs: it must fail (a pending case that
// passes fails the test, so this table shrinks as the work lands), and
// every case not named here must pass.
var oraclePending = map[string]string{
	"group-bad-gid":                      pendingRange,
	"kind-exec-group-emptylist":          pendingEmptylist,
	"kind-exec-group-false":              pendingExecAccount,
	"kind-exec-group-float":              pendingExecAccount,
	"kind-exec-group-list":               pendingExecAccount,
	"kind-exec-group-map":                pendingExecAccount,
	"kind-exec-provider-list":            pendingParamList,
	"kind-exec-returns-emptylist":        pendingEmptylist,
	"kind-exec-returns-false":            pendingReturns,
	"kind-exec-returns-float":            pendingReturns,
	"kind-exec-returns-map":              pendingReturns,
	"kind-exec-returns-true":             pendingReturns,
	"kind-exec-timeout-list":             pendingParamList,
	"kind-exec-user-emptylist":           pendingEmptylist,
	"kind-exec-user-false":               pendingExecAccount,
	"kind-exec-user-float":               pendingExecAccount,
	"kind-exec-user-list":                pendingExecAccount,
	"kind-exec-user-map":                 pendingExecAccount,
	"kind-file-backup-list":              pendingParamList,
	"kind-file-checksum-false":           pendingFalseOff,
	"kind-file-checksum_value-emptylist": pendingEmptylist,
	"kind-file-checksum_value-false":     pendingChecksumValue,
	"kind-file-checksum_value-float":     pendingChecksumValue,
	"kind-file-checksum_value-integer":   pendingChecksumValue,
	"kind-file-checksum_value-list":      pendingChecksumValue,
	"kind-file-checksum_value-map":       pendingChecksumValue,
	"kind-file-checksum_value-string":    pendingChecksumValue,
	"kind-file-checksum_value-true":      pendingChecksumValue,
	"kind-file-content-emptylist":        pendingEmptylist,
	"kind-file-ctime-emptylist":          pendingEmptylist,
	"kind-file-ensure-emptylist":         pendingEmptylist,
	"kind-file-ensure-true":              pendingEnsureTrue,
	"kind-file-group-float":              pendingOwnerFloat,
	"kind-file-ignore-false":             pendingFalseOff,
	"kind-file-mode-emptylist":           pendingEmptylist,
	"kind-file-mtime-emptylist":          pendingEmptylist,
	"kind-file-owner-float":              pendingOwnerFloat,
	"kind-file-provider-list":            pendingParamList,
	"kind-file-source-emptylist":         pendingEmptylist,
	"kind-file-type-emptylist":           pendingEmptylist,
	"kind-file-validate_cmd-false":       pendingFalseOff,
	"kind-notify-message-emptylist":      pendingEmptylist,
	"kind-notify-name-emptylist":         pendingEmptylist,
	"kind-notify-name-false":             pendingNotify,
	"kind-notify-name-list":              pendingParamList,
	"kind-notify-name-map":               pendingNotify,
}
