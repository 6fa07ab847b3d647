set -e
export DEBIAN_FRONTEND=noninteractive
apt-get -y -qq -o DPkg::Lock::Timeout=600 purge acl >/dev/null
rm -rf /srv/pippet-acl
