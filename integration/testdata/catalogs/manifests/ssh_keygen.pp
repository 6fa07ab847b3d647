user { 'pippetkey':
  ensure     => present,
  managehome => true,
  home       => '/home/pippetkey',
  shell      => '/bin/bash',
}
ssh_keygen { 'pippetkey':
  type    => 'rsa',
  require => User['pippetkey'],
}
