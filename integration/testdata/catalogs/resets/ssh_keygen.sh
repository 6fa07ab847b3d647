set -e
export DEBIAN_FRONTEND=noninteractive
userdel -r pippetkey >/dev/null 2>&1 || true
rm -rf /home/pippetkey
