set -e
export DEBIAN_FRONTEND=noninteractive
service xinetd stop >/dev/null 2>&1 || true
apt-get -y -qq -o DPkg::Lock::Timeout=600 purge xinetd tftpd-hpa >/dev/null
rm -rf /etc/xinetd.d /etc/xinetd.conf
