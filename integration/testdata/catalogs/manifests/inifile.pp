ini_setting { 'pippet listen':
  ensure  => present,
  path    => '/etc/pippet.ini',
  section => 'server',
  setting => 'listen',
  value   => '127.0.0.1:8080',
}
ini_setting { 'pippet workers':
  ensure  => present,
  path    => '/etc/pippet.ini',
  section => 'server',
  setting => 'workers',
  value   => '4',
}
ini_subsetting { 'pippet flags':
  ensure     => present,
  path       => '/etc/pippet.ini',
  section    => 'server',
  setting    => 'flags',
  subsetting => '-v',
}
file_line { 'pippet hosts.allow':
  path => '/etc/hosts.allow',
  line => 'sshd: 127.0.0.1',
}
