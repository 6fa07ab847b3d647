file { '@DIR@/f': content => Sensitive("NEWSECRET1\n") }
file { '@DIR@/new': content => Sensitive("NEWSECRET2\n"), mode => '0600' }
file { '@DIR@/plain': content => "plain new\n" }
exec { 'e1': command => Sensitive("/bin/sh -c 'echo SECRET3; exit 3'"), logoutput => true }
exec { 'e2': command => "/bin/sh -c 'echo SECRET4; exit 0'", unless => Sensitive("/bin/sh -c 'echo SECRET5; exit 1'"), logoutput => true }
notify { 'n': message => Sensitive("SECRET6") }
file { '@DIR@/after': content => "x\n", require => Exec['e1'] }
