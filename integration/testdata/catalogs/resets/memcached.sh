set -e
export DEBIAN_FRONTEND=noninteractive
service memcached stop >/dev/null 2>&1 || true
apt-get -y -qq -o DPkg::Lock::Timeout=600 purge memcached >/dev/null
rm -f /etc/memcached.conf
