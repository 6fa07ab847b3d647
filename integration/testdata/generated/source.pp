file { '/tmp/pippet-gen-cases/source/dst':
  ensure  => directory,
  recurse => true,
  source  => '/tmp/pippet-gen-cases/source/src',
  mode    => '0644',
}
