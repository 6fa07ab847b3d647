class { 'openssl': }
file { '/etc/pippet-ssl': ensure => directory, mode => '0755' }
openssl::certificate::x509 { 'pippet':
  country      => 'CH',
  organization => 'Pippet',
  commonname   => 'pippet.example.com',
  altnames     => ['www.pippet.example.com'],
  base_dir     => '/etc/pippet-ssl',
  days         => 3650,
  require      => File['/etc/pippet-ssl'],
}
