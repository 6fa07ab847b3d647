class { 'apache':
  default_vhost => true,
  mpm_module    => 'prefork',
}
apache::vhost { 'pippet.example.com':
  port    => 80,
  docroot => '/var/www/pippet',
}
