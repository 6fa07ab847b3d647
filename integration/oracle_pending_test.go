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
	pendingSelinux       = "the selinux attributes (seluser, selrole, seltype, selrange, selinux_ignore_defaults) are not declared: Puppet accepts them and does nothing without SELinux"
)

// oraclePending are the oracle cases the receiver does not pass yet, with
// the reason. A pending case still runs: it must fail (a pending case that
// passes fails the test, so this table shrinks as the work lands), and
// every case not named here must pass.
var oraclePending = map[string]string{
	"group-bad-gid":                            pendingRange,
	"kind-exec-group-emptylist":                pendingEmptylist,
	"kind-exec-group-false":                    pendingExecAccount,
	"kind-exec-group-float":                    pendingExecAccount,
	"kind-exec-group-list":                     pendingExecAccount,
	"kind-exec-group-map":                      pendingExecAccount,
	"kind-exec-provider-list":                  pendingParamList,
	"kind-exec-returns-emptylist":              pendingEmptylist,
	"kind-exec-returns-false":                  pendingReturns,
	"kind-exec-returns-float":                  pendingReturns,
	"kind-exec-returns-map":                    pendingReturns,
	"kind-exec-returns-true":                   pendingReturns,
	"kind-exec-timeout-list":                   pendingParamList,
	"kind-exec-user-emptylist":                 pendingEmptylist,
	"kind-exec-user-false":                     pendingExecAccount,
	"kind-exec-user-float":                     pendingExecAccount,
	"kind-exec-user-list":                      pendingExecAccount,
	"kind-exec-user-map":                       pendingExecAccount,
	"kind-file-backup-list":                    pendingParamList,
	"kind-file-checksum-false":                 pendingFalseOff,
	"kind-file-checksum_value-emptylist":       pendingEmptylist,
	"kind-file-checksum_value-false":           pendingChecksumValue,
	"kind-file-checksum_value-float":           pendingChecksumValue,
	"kind-file-checksum_value-integer":         pendingChecksumValue,
	"kind-file-checksum_value-list":            pendingChecksumValue,
	"kind-file-checksum_value-map":             pendingChecksumValue,
	"kind-file-checksum_value-string":          pendingChecksumValue,
	"kind-file-checksum_value-true":            pendingChecksumValue,
	"kind-file-content-emptylist":              pendingEmptylist,
	"kind-file-ctime-emptylist":                pendingEmptylist,
	"kind-file-ensure-emptylist":               pendingEmptylist,
	"kind-file-ensure-true":                    pendingEnsureTrue,
	"kind-file-group-float":                    pendingOwnerFloat,
	"kind-file-ignore-false":                   pendingFalseOff,
	"kind-file-mode-emptylist":                 pendingEmptylist,
	"kind-file-mtime-emptylist":                pendingEmptylist,
	"kind-file-owner-float":                    pendingOwnerFloat,
	"kind-file-provider-list":                  pendingParamList,
	"kind-file-selinux_ignore_defaults-false":  pendingSelinux,
	"kind-file-selinux_ignore_defaults-string": pendingSelinux,
	"kind-file-selinux_ignore_defaults-true":   pendingSelinux,
	"kind-file-selrange-emptylist":             pendingSelinux,
	"kind-file-selrange-false":                 pendingSelinux,
	"kind-file-selrange-float":                 pendingSelinux,
	"kind-file-selrange-integer":               pendingSelinux,
	"kind-file-selrange-list":                  pendingSelinux,
	"kind-file-selrange-map":                   pendingSelinux,
	"kind-file-selrange-string":                pendingSelinux,
	"kind-file-selrange-true":                  pendingSelinux,
	"kind-file-selrole-emptylist":              pendingSelinux,
	"kind-file-selrole-false":                  pendingSelinux,
	"kind-file-selrole-float":                  pendingSelinux,
	"kind-file-selrole-integer":                pendingSelinux,
	"kind-file-selrole-list":                   pendingSelinux,
	"kind-file-selrole-map":                    pendingSelinux,
	"kind-file-selrole-string":                 pendingSelinux,
	"kind-file-selrole-true":                   pendingSelinux,
	"kind-file-seltype-emptylist":              pendingSelinux,
	"kind-file-seltype-false":                  pendingSelinux,
	"kind-file-seltype-float":                  pendingSelinux,
	"kind-file-seltype-integer":                pendingSelinux,
	"kind-file-seltype-list":                   pendingSelinux,
	"kind-file-seltype-map":                    pendingSelinux,
	"kind-file-seltype-string":                 pendingSelinux,
	"kind-file-seltype-true":                   pendingSelinux,
	"kind-file-seluser-emptylist":              pendingSelinux,
	"kind-file-seluser-false":                  pendingSelinux,
	"kind-file-seluser-float":                  pendingSelinux,
	"kind-file-seluser-integer":                pendingSelinux,
	"kind-file-seluser-list":                   pendingSelinux,
	"kind-file-seluser-map":                    pendingSelinux,
	"kind-file-seluser-string":                 pendingSelinux,
	"kind-file-seluser-true":                   pendingSelinux,
	"kind-file-source-emptylist":               pendingEmptylist,
	"kind-file-type-emptylist":                 pendingEmptylist,
	"kind-file-validate_cmd-false":             pendingFalseOff,
	"kind-notify-message-emptylist":            pendingEmptylist,
	"kind-notify-message-false":                pendingNotify,
	"kind-notify-message-map":                  pendingNotify,
	"kind-notify-name-emptylist":               pendingEmptylist,
	"kind-notify-name-false":                   pendingNotify,
	"kind-notify-name-list":                    pendingParamList,
	"kind-notify-name-map":                     pendingNotify,
}
