set -e
export DEBIAN_FRONTEND=noninteractive
rm -rf /etc/modprobe.d
