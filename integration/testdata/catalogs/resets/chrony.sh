set -e
export DEBIAN_FRONTEND=noninteractive
service chrony stop >/dev/null 2>&1 || true
apt-get -y -qq -o DPkg::Lock::Timeout=600 purge chrony >/dev/null
rm -rf /etc/chrony
dpkg -s systemd-timesyncd >/dev/null 2>&1 || apt-get -y -qq -o DPkg::Lock::Timeout=600 install systemd-timesyncd >/dev/null
