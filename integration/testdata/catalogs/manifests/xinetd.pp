include xinetd
xinetd::service { 'pippet-echo':
  port        => '7007',
  server      => '/bin/cat',
  socket_type => 'stream',
  protocol    => 'tcp',
  user        => 'nobody',
  group       => 'nogroup',
}
