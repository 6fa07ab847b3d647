// Package all registers every resource type pippet has with
// applier.Default. Import it for its side effect:
//
//	import _ "github.com/pippet/pippet/applier/types/all"
package all

import (
	_ "github.com/pippet/pippet/applier/types/anchor"
	_ "github.com/pippet/pippet/applier/types/augeas"
	_ "github.com/pippet/pippet/applier/types/concat"
	_ "github.com/pippet/pippet/applier/types/cron"
	_ "github.com/pippet/pippet/applier/types/exec"
	_ "github.com/pippet/pippet/applier/types/file"
	_ "github.com/pippet/pippet/applier/types/file_line"
	_ "github.com/pippet/pippet/applier/types/group"
	_ "github.com/pippet/pippet/applier/types/host"
	_ "github.com/pippet/pippet/applier/types/ini_setting"
	_ "github.com/pippet/pippet/applier/types/ini_subsetting"
	_ "github.com/pippet/pippet/applier/types/mailalias"
	_ "github.com/pippet/pippet/applier/types/mount"
	_ "github.com/pippet/pippet/applier/types/notify"
	_ "github.com/pippet/pippet/applier/types/package"
	_ "github.com/pippet/pippet/applier/types/service"
	_ "github.com/pippet/pippet/applier/types/ssh_authorized_key"
	_ "github.com/pippet/pippet/applier/types/sshkey"
	_ "github.com/pippet/pippet/applier/types/tidy"
	_ "github.com/pippet/pippet/applier/types/user"
)
