package service

import "testing"

// FakeSystemd makes the systemd provider suitable and run the given
// systemctl for the rest of the test (PID 1 is not systemd on the
// machines these tests run on).
func FakeSystemd(t *testing.T, pid1File, systemctlPath string) {
	oldPid1, oldCtl := pid1, systemctl
	pid1, systemctl = pid1File, systemctlPath
	t.Cleanup(func() { pid1, systemctl = oldPid1, oldCtl })
}
