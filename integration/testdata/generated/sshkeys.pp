user { 'pipgensk':
  ensure         => present,
  home           => '/home/pipgensk',
  purge_ssh_keys => true,
}
ssh_authorized_key { 'kept@host':
  user => 'pipgensk',
  type => 'ssh-ed25519',
  key  => 'AAAAC3NzaC1lZDI1NTE5AAAAIKept',
}
