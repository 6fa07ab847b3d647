set -e
export DEBIAN_FRONTEND=noninteractive
apt-get -y -qq -o DPkg::Lock::Timeout=600 purge logrotate >/dev/null
rm -f /etc/logrotate.conf /etc/logrotate.d/wtmp /etc/logrotate.d/btmp /etc/logrotate.d/pippet /etc/cron.daily/logrotate
