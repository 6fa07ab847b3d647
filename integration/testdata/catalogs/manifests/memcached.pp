class { 'memcached':
  max_memory => 64,
  listen_ip  => '127.0.0.1',
}
