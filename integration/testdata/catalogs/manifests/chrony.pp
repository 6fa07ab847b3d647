class { 'chrony':
  servers => ['0.debian.pool.ntp.org', '1.debian.pool.ntp.org'],
}
