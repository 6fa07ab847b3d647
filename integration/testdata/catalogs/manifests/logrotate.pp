include logrotate::base
logrotate::rule { 'pippet':
  path         => '/var/log/pippet/*.log',
  rotate       => '5',
  rotate_every => 'week',
  compress     => true,
  missingok    => true,
  postrotate   => '/usr/bin/true',
}
