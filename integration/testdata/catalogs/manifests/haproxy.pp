class { 'haproxy': }
haproxy::listen { 'pippet':
  collect_exported => false,
  ipaddress        => '127.0.0.1',
  ports            => '8140',
}
haproxy::balancermember { 'web01':
  listening_service => 'pippet',
  server_names      => 'web01',
  ipaddresses       => '127.0.0.2',
  ports             => '8141',
  options           => 'check',
}
