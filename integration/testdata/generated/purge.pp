file { '/tmp/pippet-gen-cases/purge/d':
  ensure  => directory,
  recurse => true,
  purge   => true,
  force   => true,
}
file { '/tmp/pippet-gen-cases/purge/d/keep':
  content => "kept\n",
}
file { '/tmp/pippet-gen-cases/purge/d/kept':
  ensure => directory,
}
