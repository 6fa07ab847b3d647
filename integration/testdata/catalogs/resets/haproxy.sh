set -e
export DEBIAN_FRONTEND=noninteractive
service haproxy stop >/dev/null 2>&1 || true
apt-get -y -qq -o DPkg::Lock::Timeout=600 purge haproxy >/dev/null
rm -rf /etc/haproxy /var/lib/haproxy /etc/default/haproxy
