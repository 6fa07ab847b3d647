file { '/tmp/pippet-gen-cases/tidy/d/keep.log':
  content => "kept\n",
}
tidy { '/tmp/pippet-gen-cases/tidy/d':
  recurse => true,
  matches => '*.log',
}
