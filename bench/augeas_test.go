package bench

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// An unchanged augeas resource (postfix's: a main.cf key already set)
// and an unchanged mailalias (root's alias in a Debian-sized aliases
// file), through the receiver's engine as a re-sent request. augeas
// costs one augtool process (its dry run); mailalias a stat of its file.

func mainCF(b *testing.B) string {
	p := filepath.Join(b.TempDir(), "main.cf")
	body := "# See /usr/share/postfix/main.cf.dist for a commented, more complete version\n" +
		"smtpd_banner = $myhostname ESMTP $mail_name (Debian/GNU)\nbiff = no\nappend_dot_mydomain = no\n" +
		"readme_directory = no\ncompatibility_level = 3.6\nsmtpd_tls_security_level=may\n" +
		"smtp_tls_security_level = may\nmyhostname = vm\nalias_maps = hash:/etc/aliases\n" +
		"alias_database = hash:/etc/aliases\nmyorigin = pippet.example.com\nmydestination = $myhostname, localhost\n" +
		"relayhost =\nmynetworks = 127.0.0.0/8 [::ffff:127.0.0.0]/104 [::1]/128\nmailbox_size_limit = 0\n" +
		"recipient_delimiter = +\ninet_interfaces = loopback-only\ninet_protocols = all\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

func aliasesFile(b *testing.B) string {
	p := filepath.Join(b.TempDir(), "aliases")
	body := "# /etc/aliases\nmailer-daemon: postmaster\npostmaster: root\nnobody: root\nhostmaster: root\n" +
		"usenet: root\nnews: root\nwebmaster: root\nwww: root\nftp: root\nabuse: root\nnoc: root\n" +
		"security: root\nroot: nobody\n"
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkAugeasUnchanged: postfix's `set myorigin 'pippet.example.com'`
// on a main.cf that has it.
func BenchmarkAugeasUnchanged(b *testing.B) {
	benchUnchanged(b, `{"type":"augeas","title":"manage postfix 'myorigin'","params":"{incl: '`+mainCF(b)+
		`', lens: Postfix_Main.lns, changes: \"set myorigin 'pippet.example.com'\"}"}`)
}

// BenchmarkAugeasReadFloor: the least an augtool-driven check costs, one
// augtool loading the file and answering one get.
func BenchmarkAugeasReadFloor(b *testing.B) {
	p := mainCF(b)
	b.ReportAllocs()
	reportCPU(b)
	for b.Loop() {
		if out, err := augtoolGet(p); err != nil {
			b.Fatal(err, string(out))
		}
	}
}

// BenchmarkMailaliasUnchanged: root's alias is there.
func BenchmarkMailaliasUnchanged(b *testing.B) {
	benchUnchanged(b, `{"type":"mailalias","title":"root","params":"{recipient: nobody, target: '`+aliasesFile(b)+`'}"}`)
}

func BenchmarkMailaliasReadFloor(b *testing.B) { benchRead(b, aliasesFile(b)) }

func augtoolGet(p string) ([]byte, error) {
	cmd := exec.Command("augtool", "-A", "-t", "Postfix_Main.lns incl "+p, "get", "/files"+p+"/myorigin")
	return cmd.CombinedOutput()
}
