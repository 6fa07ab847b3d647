include posix_acl::requirements
file { '/srv/pippet-acl': ensure => directory, mode => '0750' }
posix_acl { '/srv/pippet-acl':
  action     => set,
  permission => ['user::rwx', 'group::r-x', 'mask::rwx', 'other::---', 'user:nobody:r-x'],
  provider   => posixacl,
  require    => [File['/srv/pippet-acl'], Class['posix_acl::requirements']],
}
