set -e
export DEBIAN_FRONTEND=noninteractive
service redis-server stop >/dev/null 2>&1 || true
apt-get -y -qq -o DPkg::Lock::Timeout=600 purge redis-server redis-tools >/dev/null
rm -rf /etc/redis /var/log/redis /var/lib/redis /etc/default/redis-server /var/run/redis
